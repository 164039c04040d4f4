"""A task's terminal state read into what happened to it (`TaskOutcome`), and a leg's outcome.

The wire's status does not say it alone: FastMCP 4 reports a tool that raised as `completed`
with an `isError` result (fastmcp-tasks masks the exception into the result), FastMCP 3 and the
1.x SDK as `failed`. Both are `tool_error` here, so every line (and both sides) say the same.
`input_required` is not an end: the leg that asked ends `pending_input`, the task goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from mcpobs import semconv
from mcpobs._core import outcome as _outcome
from mcpobs._core.outcome import Classification
from mcpobs.semconv import TaskOutcome, TaskStatus

TERMINAL_STATUSES = frozenset({TaskStatus.COMPLETED.value, TaskStatus.FAILED.value, TaskStatus.CANCELLED.value})


def is_error_result(result: object) -> bool:
    """Whether a tool result (a wire dict or the SDK's model) says `isError: true`."""
    if isinstance(result, Mapping):
        return cast("Mapping[str, Any]", result).get("isError") is True
    return getattr(result, "is_error", False) is True or getattr(result, "isError", False) is True


def terminal(status: object, *, is_error: bool = False, tool_raised: bool = False) -> TaskOutcome | None:
    """The outcome of a task whose wire status is `status`; None while it is not over.

    `is_error`: the completed result's `isError` (FastMCP 4's masked tool error).
    `tool_raised`: the line knows a `failed` task failed because its tool raised (FastMCP 3, the
    1.x SDK): `tool_error`, as FastMCP 4 says it; a `failed` task otherwise failed outside the tool.
    """
    if status == TaskStatus.COMPLETED:
        return TaskOutcome.TOOL_ERROR if is_error else TaskOutcome.OK
    if status == TaskStatus.FAILED:
        return TaskOutcome.TOOL_ERROR if tool_raised else TaskOutcome.FAILED
    if status == TaskStatus.CANCELLED:
        return TaskOutcome.CANCELLED
    return None


def error_type(outcome: TaskOutcome) -> str | None:
    """`error.type` of a task that ended as `outcome` (None: not an error)."""
    if outcome is TaskOutcome.TOOL_ERROR:
        return semconv.TOOL_ERROR
    if outcome in semconv.TASK_ERROR_OUTCOMES:
        return outcome.value
    return None


def leg(*, is_error: bool = False, asked_input: bool = False) -> Classification:
    """How an execution leg that returned ended: `pending_input` when it asked, else ok or tool_error."""
    if asked_input:
        return _outcome.PENDING_INPUT
    return _outcome.TOOL_ERROR if is_error else _outcome.OK


def leg_raised(exc: BaseException) -> Classification:
    """How a leg that raised ended: cancelled (its task cancelled, or its worker stopping) or a crash."""
    if _outcome.is_cancellation(exc):
        return _outcome.CANCELLED
    return _outcome.crash(exc)


def of_leg(cls: Classification) -> TaskOutcome | None:
    """The task's outcome when a leg ended as `cls` and nothing else ends it: None for a leg that
    asked for input (the task waits) or was cancelled (whoever cancelled it records that)."""
    if cls is _outcome.OK:
        return TaskOutcome.OK
    if cls is _outcome.TOOL_ERROR:
        return TaskOutcome.TOOL_ERROR
    if cls.outcome is semconv.Outcome.SERVER_ERROR:
        return TaskOutcome.FAILED
    return None
