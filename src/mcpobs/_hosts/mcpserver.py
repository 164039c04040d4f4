"""The SDK's `MCPServer`: registries in its managers, tool failures at its `ToolManager`.

- Names: the live tool and prompt managers (a tool added later counts at once).
- A tool's failure: `ToolManager.call_tool` raises the SDK's `ToolError` (unknown tool, bad
  arguments, a deliberate error) or `UnexpectedToolError` (a bug, with its cause) before
  `MCPServer` flattens it into an `isError` result; the hook records which, on `RequestState`.
- Progress: through `ServerSession.report_progress` (`_server/progress.py`, every host's).
- Transports: `run_stdio_async` labels stdio; its app is the lowlevel `Server.streamable_http_app`.
- The session line: the managers' counts.
"""

from __future__ import annotations

from typing import Any

from mcpobs._core import inventory as I
from mcpobs._core import outcome as _outcome
from mcpobs._core.guard import guarded, report
from mcpobs._core.labels import PIPE
from mcpobs._core.names import ServerNames
from mcpobs._core.outcome import Classification
from mcpobs._core.patches import Patch
from mcpobs._hosts.host import Host, Setup, know_managers
from mcpobs._server import state as _state


class MCPServerHost(Host):
    name = "MCPServer"

    def is_owner(self, obj: object) -> bool:
        from mcp.server.mcpserver import MCPServer

        return isinstance(obj, MCPServer)

    def owner_of(self, server: Any) -> Any | None:
        """The `MCPServer` a lowlevel `Server` belongs to: its tools/call handler is bound to it."""
        entry = server.get_request_handler("tools/call")
        owner = getattr(getattr(entry, "handler", None), "__self__", None)
        return owner if self.is_owner(owner) else None

    def lowlevel_of(self, owner: Any) -> Any:
        return getattr(owner, I.MCPSERVER_LOWLEVEL.attribute)

    def know_names(self, names: ServerNames, owner: Any) -> None:
        know_managers(
            names,
            getattr(owner, I.MCPSERVER_TOOLS.attribute),
            getattr(owner, I.MCPSERVER_PROMPTS.attribute),
            getattr(owner, I.MCPSERVER_RESOURCES.attribute),
        )

    def patches(self, setup: Setup) -> list[Patch]:
        def mcpserver_init(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> None:
            """Wraps `MCPServer.__init__`: the bus before (the listen handler takes it there), the rest after."""
            from mcpobs._server import subscriptions as _subscriptions  # mcp 2.x's bus: imported on that line only

            try:
                kwargs = _subscriptions.observe_bus(kwargs)
            except Exception as exc:
                report("subscription bus setup", exc)
            wrapped(*args, **kwargs)
            with guarded("MCPServer setup"):
                setup.set_up(instance, self)

        return [
            Patch.of(I.MCPSERVER_INIT, mcpserver_init, setup=True),
            Patch.of(I.MCPSERVER_STDIO, _state.on_transport(PIPE)),
            Patch.of(I.TOOL_MANAGER_CALL, tool_call_hook),
        ]


async def tool_call_hook(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """Wraps `ToolManager.call_tool`: records why a call failed before the SDK flattens it.

    Only the outermost call of a request is classified; a tool that calls another tool and
    handles its failure is not a failure.
    """
    state = _state.current()
    if state is None or state.tool_depth:
        return await wrapped(*args, **kwargs)
    # `host.outermost_tool_call` inlined: one coroutine frame and no closure on every tool call
    state.tool_depth += 1
    try:
        return await wrapped(*args, **kwargs)
    except BaseException as exc:
        with guarded("tool classification"):
            state.tool_failure, state.exception = _classify_tool_exception(exc, instance, args, kwargs)
        raise
    finally:
        state.tool_depth -= 1


def _classify_tool_exception(
    exc: BaseException, manager: Any, args: Any, kwargs: Any
) -> tuple[Classification | None, BaseException | None]:
    from mcp.server.mcpserver import exceptions
    from pydantic import ValidationError

    # mcp 2.1 and later raise a crash as `UnexpectedToolError`; 2.0 wraps every failure in a
    # `ToolError` whose cause is what was raised, so there a cause that is no `ToolError`,
    # `ResourceError` or validation error is the crash.
    unexpected = getattr(exceptions, "UnexpectedToolError", None)
    cause = exc.__cause__
    if (unexpected is not None and isinstance(exc, unexpected)) or (
        unexpected is None
        and isinstance(exc, exceptions.ToolError)
        and cause is not None
        and not isinstance(cause, exceptions.ToolError | exceptions.ResourceError | ValidationError)
    ):
        cause = cause or exc
        if _outcome.refuses_caller(cause):
            return _outcome.ACCESS_REFUSED, None
        return _outcome.TOOL_CRASH, cause
    if isinstance(exc, exceptions.ToolError):
        name = args[0] if args else kwargs.get("name")
        if cause is None and manager.get_tool(name) is None:
            return _outcome.UNKNOWN_TOOL, None
        if isinstance(cause, ValidationError):
            return _outcome.BAD_ARGUMENTS, None
        return _outcome.TOOL_ERROR, None
    from mcp.shared.exceptions import MCPError

    if isinstance(exc, MCPError):  # the middleware classifies it when raised; note that the handler did
        return None, exc
    return None, None  # cancellation: the middleware sees it raised
