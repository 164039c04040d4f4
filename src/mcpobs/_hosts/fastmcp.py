"""FastMCP 4 (`fastmcp` 4.1 and 4.2): its own lowlevel server, tool path, progress, app and stdio.

- Which server: FastMCP builds a `LowLevelServer` that knows its `FastMCP` (`.fastmcp`).
- Names: the local provider's components (`tool:NAME@VERSION`), live, so a tool is named
  on its first call; a mounted or proxied server's names are learned from listings.
- A tool's failure: `FastMCP.call_tool` raises `NotFoundError`/`DisabledError` (unknown
  tool), a validation error (bad arguments), a deliberate `ToolError`, or the `ToolError`
  FastMCP wraps an unexpected exception in ("Error calling tool 'x'", from the exception):
  that last one is recorded as the bug it is, with its cause. FastMCP then returns all of
  them as `isError` results, which is why the hook records which it was first.
- Progress: `Context.report_progress` (FastMCP sends the notification itself).
- Its app: `http_app()` (Streamable HTTP) gets the transport boundary, on its MCP path.
- stdio: `run_stdio_async` labels the transport.
- Coexistence with FastMCP's own telemetry: inside every request mcpobs records, FastMCP's
  spans are switched off with its documented `suppress_fastmcp_telemetry()` (the scoped
  `propagation_only` mode), so there is one SERVER span per request, mcpobs's, whatever
  `FASTMCP_TELEMETRY_MODE` says. Trace context still flows (docs/fastmcp.md).
- `uninstrument()`: FastMCP removed the SDK's `OpenTelemetryMiddleware` on purpose; it
  is not put back.
"""

from __future__ import annotations

import re
from typing import Any

from mcpobs._core import inventory as I
from mcpobs._core import outcome as _outcome
from mcpobs._core.guard import guarded
from mcpobs._core.labels import PIPE
from mcpobs._core.names import ServerNames
from mcpobs._core.outcome import Classification
from mcpobs._core.patches import Patch
from mcpobs._hosts.host import Host, Setup, outermost_tool_call
from mcpobs._server import progress as _progress
from mcpobs._server import state as _state
from mcpobs._tasks.task import current_leg

_HTTP_TRANSPORTS = frozenset({"streamable-http"})
"""`app.state.transport_type` of the apps the boundary understands (not the legacy SSE app)."""


class FastMCPHost(Host):
    name = "FastMCP"
    drops_sdk_span_middleware = True
    _ref = I.FASTMCP_REF
    _lowlevel = I.FASTMCP_LOWLEVEL
    _local_provider = I.FASTMCP_LOCAL_PROVIDER
    _components = I.FASTMCP_COMPONENTS
    """The private attributes read, by their rows (FastMCP 3 has them too, under rows of its own)."""

    def is_owner(self, obj: object) -> bool:
        cls = _fastmcp_class()
        return cls is not None and isinstance(obj, cls)

    def owner_of(self, server: Any) -> Any | None:
        ref = getattr(server, self._ref.attribute, None)
        owner = ref() if callable(ref) else None
        return owner if owner is not None and self.is_owner(owner) else None

    def lowlevel_of(self, owner: Any) -> Any:
        return getattr(owner, self._lowlevel.attribute)

    def know_names(self, names: ServerNames, owner: Any) -> None:
        provider = getattr(owner, self._local_provider.attribute)
        attribute = self._components.attribute

        def components() -> dict[str, Any]:  # read each time: the provider's own dict, whatever it is now
            return getattr(provider, attribute)

        def registered(kind: str) -> Any:
            def lookup(name: str) -> Any:
                found = components().get(f"{kind}:{name}@")  # an unversioned component's key
                if found is None:
                    prefix = f"{kind}:{name}@"
                    for key, component in components().items():  # a versioned one (rare)
                        if key.startswith(prefix):
                            return component
                return found

            return lookup

        def offered() -> dict[str, int]:
            kinds = [key.split(":", 1)[0] for key in components()]
            return {
                "tools": kinds.count("tool"),
                "prompts": kinds.count("prompt"),
                "resources": kinds.count("resource"),
            }

        names.tool_lookup = registered("tool")
        names.prompt_lookup = registered("prompt")
        names.offered = offered
        names.learns_listed = True  # mounted and proxied servers' names come from listings

    def patches(self, setup: Setup) -> list[Patch]:
        telemetry = setup.telemetry

        def fastmcp_init(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> None:
            wrapped(*args, **kwargs)  # its LowLevelServer got ServerMiddleware in `Server.__init__`
            with guarded("FastMCP setup"):
                setup.set_up(instance, self)

        def http_app(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
            app = wrapped(*args, **kwargs)
            with guarded("FastMCP transport boundary setup"):
                state = app.state
                if getattr(state, "transport_type", None) in _HTTP_TRANSPORTS:
                    setup.watch_app(app, self.lowlevel_of(instance), getattr(state, "path", None))
            return app

        async def report_progress(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
            with guarded("progress span"):
                if _state.current() is not None:
                    _progress.report(telemetry, instance.session, *_progress.arguments(*args, **kwargs))
                elif (leg := current_leg()) is not None:  # a task's leg, in a worker
                    _progress.report_in_leg(telemetry, leg, *_progress.arguments(*args, **kwargs))
            return await wrapped(*args, **kwargs)

        return [
            Patch.of(I.FASTMCP_INIT, fastmcp_init, setup=True),
            Patch.of(I.FASTMCP_HTTP_APP, http_app, setup=True),
            Patch.of(I.FASTMCP_STDIO, _state.on_transport(PIPE)),
            Patch.of(I.FASTMCP_CALL_TOOL, call_tool_hook),
            Patch.of(I.FASTMCP_PROGRESS, report_progress),
            Patch.of(I.FASTMCP_MIDDLEWARE, one_server_span),
        ]


def _fastmcp_class() -> Any:
    import sys

    module = sys.modules.get("fastmcp.server.server")  # not imported: no FastMCP server exists
    return getattr(module, "FastMCP", None)


async def one_server_span(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """Wraps FastMCP's root middleware: inside a request mcpobs records, FastMCP opens no span of its own.

    Nor for the `tools/list` the SDK runs itself (FastMCP 4.1 has no schema hook): no client sent it.
    """
    if _state.current() is None and not _state.internal():
        return await wrapped(*args, **kwargs)
    from fastmcp.telemetry import suppress_fastmcp_telemetry

    with suppress_fastmcp_telemetry():
        return await wrapped(*args, **kwargs)


async def call_tool_hook(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """Wraps `FastMCP.call_tool`: why the request's outermost tool call failed, before FastMCP flattens it.

    `call_tool` runs twice per request (through FastMCP's middleware, then the tool) and again
    for a mounted server's tool or a tool calling another: only the outermost is classified.
    """
    state = _state.current()
    if state is None or state.tool_depth or state.method != "tools/call":
        return await wrapped(*args, **kwargs)

    def why(exc: BaseException) -> tuple[Classification | None, BaseException | None]:
        return classify_tool_exception(exc, args[0] if args else kwargs.get("name"))

    return await outermost_tool_call(state, why, wrapped, args, kwargs)


def classify_tool_exception(exc: BaseException, name: object) -> tuple[Classification | None, BaseException | None]:
    from fastmcp.exceptions import DisabledError, NotFoundError, ToolError
    from fastmcp.exceptions import ValidationError as FastMCPValidationError
    from pydantic import ValidationError

    if isinstance(exc, NotFoundError | DisabledError):
        return _outcome.UNKNOWN_TOOL, None
    if isinstance(exc, FastMCPValidationError | ValidationError):
        return _outcome.BAD_ARGUMENTS, None
    if isinstance(exc, ToolError):
        cause = exc.__cause__
        if cause is not None and not isinstance(cause, ToolError) and _wrapped_by_fastmcp(exc, name):
            return _outcome.TOOL_CRASH, cause
        return _outcome.TOOL_ERROR, None
    return None, None  # MCPError and cancellation: the middleware sees them raised


_WRAPPED = re.compile(r"Error calling tool '[^']*'(: |$)")
"""FastMCP's message for an unexpected exception it wraps, masked or not (a mounted server's
tool is named as that server knows it)."""


def _wrapped_by_fastmcp(exc: BaseException, name: object) -> bool:
    """FastMCP's own wrapping of an unexpected exception, not a tool's deliberate error."""
    return _WRAPPED.match(str(exc)) is not None
