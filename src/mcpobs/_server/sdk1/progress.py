"""mcp 1.x: progress spans from where that line sends its progress (the span itself: `_server/progress.py`).

1.x has no `ServerSession.report_progress`: every progress notification goes out through
`send_progress_notification` (a lowlevel handler's, and the frameworks' when the caller gave a
token). The frameworks' `Context.report_progress` is wrapped too, so a report made when the
caller asked for none is counted as on 2.x; the notification it then sends is not counted again.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from mcpobs._core import guard as _guard
from mcpobs._core import inventory as I
from mcpobs._core.patches import Patch
from mcpobs._core.telemetry import Telemetry
from mcpobs._server import state as _state
from mcpobs._server.progress import arguments, report, report_in_leg
from mcpobs._server.sdk1.dispatch import name_tool_late
from mcpobs._tasks.task import current_leg

_reporting: ContextVar[bool] = ContextVar("mcpobs_progress_reporting", default=False)


def patches(telemetry: Telemetry) -> list[Patch]:
    def send_progress(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ServerSession.send_progress_notification(progress_token, progress, total, message, ...)`."""
        if not _reporting.get():
            try:
                state = _state.current()
                if state is not None and state.progress_requested is None:
                    state.progress_requested = True  # a notification carries the caller's token
                    if state.tool is None:
                        name_tool_late()
                report(telemetry, instance, *_sent(*args, **kwargs))
            except Exception as exc:
                _guard.report("progress span", exc)
        return wrapped(*args, **kwargs)

    return [Patch.of(I.SERVER1_PROGRESS, send_progress)]


def context_report(telemetry: Telemetry) -> Any:
    """A wrapper for a framework's `Context.report_progress(progress, total, message)` on mcp 1.x."""

    async def report_progress(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        try:
            state = _state.current()
            if state is not None:
                if state.progress_requested is None:
                    meta = instance.request_context.meta
                    state.progress_requested = getattr(meta, "progressToken", None) is not None
                report(telemetry, instance.session, *arguments(*args, **kwargs))
            elif (leg := current_leg()) is not None:  # a task's leg, in a docket worker (FastMCP 3)
                report_in_leg(telemetry, leg, *arguments(*args, **kwargs))
        except Exception as exc:
            _guard.report("progress span", exc)
        token = _reporting.set(True)
        try:
            return await wrapped(*args, **kwargs)
        finally:
            _reporting.reset(token)

    return report_progress


def _sent(
    progress_token: Any, progress: Any, total: Any = None, message: Any = None, related_request_id: Any = None
) -> tuple[Any, Any, Any]:
    return progress, total, message
