"""FastMCP 3 (`fastmcp` 3.x on mcp 1.x): FastMCP 4's adapter, on FastMCP 3's own seams.

FastMCP 3 is FastMCP 4's ancestor: the same `LowLevelServer` knowing its `FastMCP`, the same
components, the same `call_tool` and its failures, the same apps. What differs:

- Its own telemetry: once a global tracer provider is set, FastMCP 3 opens a SERVER span of its
  own per request, and it has no switch for it (FastMCP 4's `suppress_fastmcp_telemetry` is
  not there). `fastmcp.server.telemetry.get_tracer` (and the sampling module's) hand FastMCP a
  no-op tracer inside every request mcpobs records, so there is one SERVER span per request,
  mcpobs's; trace context still flows (the no-op span carries the current one). Outside those
  requests, FastMCP's spans are its own, as before.
- Sessions: its `LowLevelServer` overrides `run`, which is wrapped as the SDK's is (`_server/sdk1/sessions.py`).
- Progress: `Context.report_progress` on mcp 1.x (`_server/sdk1/progress.py`).
- Its apps: `http_app()` for Streamable HTTP and for SSE (both first-class on 1.x).
- Its tasks (`task=True`, on pydocket): `fastmcp3_tasks.py`.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.trace import NoOpTracer

from mcpobs._core import inventory as I
from mcpobs._core import outcome as _outcome
from mcpobs._core.guard import guarded
from mcpobs._core.labels import PIPE
from mcpobs._core.outcome import Classification
from mcpobs._core.patches import Patch
from mcpobs._core.sdk import ProtocolError
from mcpobs._hosts.fastmcp import FastMCPHost, classify_tool_exception
from mcpobs._hosts.host import Setup, outermost_tool_call
from mcpobs._hosts.sdk1 import fastmcp3_tasks as _tasks
from mcpobs._server import state as _state
from mcpobs._server.sdk1 import progress as _progress
from mcpobs._server.sdk1.tool_failures import tool_exception

_NO_OP = NoOpTracer()


class FastMCP3Host(FastMCPHost):
    name = "FastMCP 3"
    _ref = I.FASTMCP3_REF
    _lowlevel = I.FASTMCP3_LOWLEVEL
    _local_provider = I.FASTMCP3_LOCAL_PROVIDER
    _components = I.FASTMCP3_COMPONENTS

    def patches(self, setup: Setup) -> list[Patch]:
        def http_app(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
            app = wrapped(*args, **kwargs)
            with guarded("FastMCP 3 transport boundary setup"):
                state = app.state
                kind = getattr(state, "transport_type", None)
                path: Any = getattr(state, "path", None)
                if kind == "streamable-http":
                    setup.watch_app(app, self.lowlevel_of(instance), path)
                elif kind == "sse":
                    import fastmcp

                    setup.watch_app(app, self.lowlevel_of(instance), (str(path), fastmcp.settings.message_path))
            return app

        return [
            Patch.of(I.FASTMCP3_HTTP_APP, http_app, setup=True),
            Patch.of(I.FASTMCP3_STDIO, _state.on_transport(PIPE)),
            Patch.of(I.FASTMCP3_CALL_TOOL, call_tool_hook),
            Patch.of(I.FASTMCP3_PROGRESS, _progress.context_report(setup.telemetry)),
            Patch.of(I.FASTMCP3_SERVER_TRACER, one_server_span),
            Patch.of(I.FASTMCP3_SAMPLING_TRACER, one_server_span),
            *_tasks.patches(setup.telemetry),
        ]


async def call_tool_hook(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """Wraps `FastMCP.call_tool`: why the request's outermost tool call failed, before FastMCP flattens it.

    As FastMCP 4's (`fastmcp.call_tool_hook`), but a protocol error a tool raised keeps the side
    its code says, as under FastMCP 1 on this line (FastMCP wraps it in a `ToolError` first).
    """
    state = _state.current()
    if state is None or state.tool_depth or state.method != "tools/call":
        return await wrapped(*args, **kwargs)

    def why(exc: BaseException) -> tuple[Classification | None, BaseException | None]:
        found = classify_tool_exception(exc, args[0] if args else kwargs.get("name"))
        if found[0] is _outcome.TOOL_CRASH and isinstance(found[1], ProtocolError):
            return tool_exception(found[1])
        return found

    return await outermost_tool_call(state, why, wrapped, args, kwargs)


def one_server_span(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """Wraps FastMCP 3's `get_tracer()`: a no-op tracer inside a request mcpobs records (and the SDK's own)."""
    if _state.current() is None and not _state.internal():
        return wrapped(*args, **kwargs)
    return _NO_OP
