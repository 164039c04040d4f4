"""FastMCP 1 (`mcp.server.fastmcp.FastMCP`, mcp 1.x): its managers, its ToolManager hook, its apps.

- Which server: FastMCP 1 registers its own `call_tool` with its lowlevel `Server`'s decorator;
  the handler the decorator stores closes over that bound method, whose `__self__` is the
  FastMCP (read when a server first serves, so one built before `instrument()` is found too).
- Names: the live tool and prompt managers (a tool added later counts at once).
- A tool's failure: every one reaches `ToolManager.call_tool` as a `ToolError` (unknown tool:
  none under it; bad arguments: a pydantic `ValidationError` under it; a deliberate `ToolError`
  under it; a crash: the exception under it) before the lowlevel handler flattens it into an
  `isError` result; the hook records which.
- Progress: `Context.report_progress`, also when the caller gave no token.
- Transports: `run_stdio_async` labels stdio (it imported `stdio_server` by name); its
  `streamable_http_app()` and `sse_app()` get the transport boundary on their MCP endpoints.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from mcpobs._core import inventory as I
from mcpobs._core import outcome as _outcome
from mcpobs._core.guard import guarded
from mcpobs._core.labels import PIPE
from mcpobs._core.names import ServerNames
from mcpobs._core.outcome import Classification
from mcpobs._core.patches import Patch
from mcpobs._core.telemetry import Telemetry
from mcpobs._hosts.host import Host, Setup, know_managers
from mcpobs._server import state as _state
from mcpobs._server.sdk1 import progress as _progress
from mcpobs._server.sdk1.tool_failures import tool_exception


def _fastmcp1_class() -> Any:
    module = sys.modules.get("mcp.server.fastmcp.server")  # not imported: no FastMCP 1 server exists
    return getattr(module, "FastMCP", None)


class FastMCP1Host(Host):
    name = "FastMCP 1"

    def is_owner(self, obj: object) -> bool:
        cls = _fastmcp1_class()
        return cls is not None and isinstance(obj, cls)

    def owner_of(self, server: Any) -> Any | None:
        if _fastmcp1_class() is None:
            return None
        handlers: Any = getattr(server, I.SERVER1_REQUEST_HANDLERS.attribute, None) or {}
        for handler in list(handlers.values()):
            for cell in getattr(handler, "__closure__", None) or ():
                try:
                    owner = getattr(cell.cell_contents, "__self__", None)
                except ValueError:  # an empty cell
                    continue
                if self.is_owner(owner) and self.lowlevel_of(owner) is server:
                    return owner
        return None

    def lowlevel_of(self, owner: Any) -> Any:
        return getattr(owner, I.FASTMCP1_LOWLEVEL.attribute)

    def know_names(self, names: ServerNames, owner: Any) -> None:
        know_managers(
            names,
            getattr(owner, I.FASTMCP1_TOOLS.attribute),
            getattr(owner, I.FASTMCP1_PROMPTS.attribute),
            getattr(owner, I.FASTMCP1_RESOURCES.attribute),
        )

    def patches(self, setup: Setup) -> list[Patch]:
        telemetry: Telemetry = setup.telemetry

        def streamable_http_app(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
            app = wrapped(*args, **kwargs)
            with guarded("FastMCP 1 transport boundary setup"):
                setup.watch_app(app, self.lowlevel_of(instance), instance.settings.streamable_http_path)
            return app

        def sse_app(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
            app = wrapped(*args, **kwargs)
            with guarded("FastMCP 1 transport boundary setup"):
                settings = instance.settings
                setup.watch_app(app, self.lowlevel_of(instance), (settings.sse_path, settings.message_path))
            return app

        return [
            Patch.of(I.FASTMCP1_STDIO, _state.on_transport(PIPE)),
            Patch.of(I.FASTMCP1_HTTP_APP, streamable_http_app, setup=True),
            Patch.of(I.FASTMCP1_SSE_APP, sse_app, setup=True),
            Patch.of(I.FASTMCP1_TOOL_CALL, tool_call_hook),
            Patch.of(I.FASTMCP1_PROGRESS, _progress.context_report(telemetry)),
        ]


async def tool_call_hook(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """Wraps `ToolManager.call_tool(name, arguments, ...)`: why the request's outermost call failed."""
    state = _state.current()
    if state is None or state.tool_depth or state.method != "tools/call":
        return await wrapped(*args, **kwargs)
    state.tool_depth += 1
    try:
        return await wrapped(*args, **kwargs)
    except BaseException as exc:
        with guarded("tool classification"):
            state.tool_failure, state.exception = _classify(exc, instance, args[0] if args else kwargs.get("name"))
        raise
    finally:
        state.tool_depth -= 1


def _classify(exc: BaseException, manager: Any, name: object) -> tuple[Classification | None, BaseException | None]:
    from pydantic import ValidationError

    ToolError: Any = importlib.import_module("mcp.server.fastmcp.exceptions").ToolError  # mcp 1.x only

    if not isinstance(exc, ToolError):
        return None, None  # cancellation, or what FastMCP 1 lets through (a URL elicitation): seen raised
    cause = exc.__cause__
    if cause is None:
        return (_outcome.UNKNOWN_TOOL if manager.get_tool(name) is None else _outcome.TOOL_ERROR), None
    if isinstance(cause, ValidationError):
        return _outcome.BAD_ARGUMENTS, None
    if isinstance(cause, ToolError):
        return _outcome.TOOL_ERROR, None
    return tool_exception(cause)
