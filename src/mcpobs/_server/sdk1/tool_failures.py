"""mcp 1.x: why a tool call failed, where the SDK or its framework flattens the failure into an `isError` result.

A lowlevel `@server.call_tool()` handler flattens every failure into an `isError` result through
`Server._make_error_result`, which is wrapped to note why first (bad arguments, a crash, an
unknown tool, an output its schema rejects), as the framework hosts' tool hooks do for FastMCP 1
and 3 (`_hosts/sdk1/`), which read a tool's exception through `tool_exception` here.
"""

from __future__ import annotations

import sys
from typing import Any

from mcpobs import semconv as S
from mcpobs._core import inventory as I
from mcpobs._core import outcome as _outcome
from mcpobs._core.guard import guarded
from mcpobs._core.outcome import Classification
from mcpobs._core.patches import Patch
from mcpobs._core.sdk import ProtocolError
from mcpobs._server import state as _state
from mcpobs._server.sdk1.dispatch import pending_call
from mcpobs.semconv import Boundary, Outcome


def patches() -> list[Patch]:
    def make_error_result(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `Server._make_error_result(message)`: a lowlevel tools/call's failure, before it is flattened."""
        state = _state.current()
        if state is not None and state.tool_failure is None and state.method == "tools/call":
            with guarded("tool classification"):
                message = args[0] if args else kwargs.get("error_message", "")
                pending = pending_call()
                name = pending.view.params.get("name") if pending is not None and pending.view.params else None
                state.tool_failure, state.exception = _lowlevel_failure(sys.exc_info()[1], str(message), instance, name)
        return wrapped(*args, **kwargs)

    return [Patch.of(I.SERVER1_TOOL_ERROR_RESULT, make_error_result)]


OUTPUT_INVALID = Classification(Outcome.SERVER_ERROR, Boundary.HANDLER, S.OUTPUT_VALIDATION)
"""A tool's result its own output schema rejects: the server's fault, answered as an `isError` result."""


def _lowlevel_failure(
    exc: BaseException | None, message: str, server: Any, name: object
) -> tuple[Classification | None, BaseException | None]:
    """Why a lowlevel `@server.call_tool()` handler answered `isError`, from what it was handling."""
    if exc is not None and type(exc).__module__.startswith("jsonschema"):
        if message.startswith("Input validation error"):
            return _outcome.BAD_ARGUMENTS, None
        return OUTPUT_INVALID, None
    if exc is None:  # no structured content for an output schema, or a return value it cannot use
        return (OUTPUT_INVALID if message.startswith("Output validation error") else _outcome.TOOL_CRASH), None
    listed = getattr(server, I.SERVER1_TOOL_CACHE.attribute, None)
    # The handler has just refreshed the server's listing for this name: listed, but not this tool.
    if isinstance(listed, dict) and listed and name not in listed:
        return _outcome.UNKNOWN_TOOL, None
    return tool_exception(exc)


def tool_exception(exc: BaseException) -> tuple[Classification, BaseException | None]:
    """A tool that raised, its exception flattened by the 1.x SDK into an `isError` result: what it was.

    A protocol error keeps the side its code says (the caller's mistake, or the server's), at the
    handler; it went out as a tool result, so no JSON-RPC code is recorded with it.
    """
    from mcpobs._core.methods import CALLER_MISTAKES

    if isinstance(exc, ProtocolError):
        if exc.error.code in CALLER_MISTAKES:
            return Classification(Outcome.CLIENT_ERROR, Boundary.HANDLER), None
        return _outcome.TOOL_CRASH, exc
    if _outcome.refuses_caller(exc):
        return _outcome.ACCESS_REFUSED, None
    if _caller_gone(exc):
        return _outcome.CANCELLED, None
    return _outcome.TOOL_CRASH, exc


def _caller_gone(exc: BaseException) -> bool:
    """The tool failed writing to its session (a progress report, a request to the caller) because
    the session's stream had closed: the caller vanished (a stdio host gone). mcp 1.30 cancels
    the request first; mcp 1.24 lets the tool's next write fail. Either way the caller's doing
    (docs/failure-taxonomy.md), `cancelled` on both lines."""
    import anyio

    seen: set[int] = set()
    found: BaseException | None = exc
    while found is not None and id(found) not in seen:
        seen.add(id(found))
        if isinstance(found, anyio.ClosedResourceError | anyio.BrokenResourceError):
            frame = found.__traceback__
            while frame is not None:
                if frame.tb_frame.f_code.co_filename.replace("\\", "/").endswith(_SESSION_MODULE):
                    return True
                frame = frame.tb_next
        found = found.__cause__ or found.__context__
    return False


_SESSION_MODULE = "/mcp/shared/session.py"
"""Where the SDK's session writes its messages (`BaseSession.send_notification`, `send_request`)."""
