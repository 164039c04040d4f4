"""A task call's handle remembered (by hashed id), and each later request for it sent in its context.

A `tools/call` a server answers with a task (`resultType: "task"`, the tasks extension SEP-2663
that fastmcp-tasks speaks on mcp 2.x) is a submission: its CLIENT span ends there as `ok`, with
the task's id hash and status. Its span context is kept under the id hash, in a bounded map of
this process; every `tasks/get`, `tasks/update`, `tasks/cancel` or `tasks/result` the process
sends later for that task opens its CLIENT span as a child of it, so the `traceparent` it sends
puts the server's span of that request in the task's trace too (the caller's own context, when it
had one, is kept as a link). Whatever sends them (fastmcp-tasks' transparent `call_tool` resolver,
`ToolTask`, a host's own request) goes through `ClientSession.send_request`: no seam of its own.

The poll that first sees the task ended writes the task's outcome, read from the status as the
server's side reads it (`completed` with `isError` is the tool's failure), and records how many
`tasks/get` the process sent for the task (`mcpobs.client.task.polls`). A task id is a bearer
credential: only its hash is ever recorded (`_tasks/ids.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, NonRecordingSpan, SpanContext

from mcpobs import semconv as S
from mcpobs._core import bounded, runtime_context
from mcpobs._tasks import metrics as _metrics
from mcpobs._tasks import outcome as _outcome
from mcpobs._tasks.ids import task_id_hash

if TYPE_CHECKING:
    from mcpobs._core.telemetry import Telemetry

_STATUSES = frozenset(S.TaskStatus)


class Handle:
    """One task this process submitted: where its trace is, its tool, the polls sent for it."""

    __slots__ = ("context", "ended", "named", "polls", "tool")

    def __init__(self, context: SpanContext, tool: str | None, named: str | None) -> None:
        self.context = context
        self.tool = tool
        """The tool as a label (bounded, as the submission's span name has it), or None when `_OTHER`."""
        self.named = named
        """The tool as the submission's span records it (a name the session had not listed, too)."""
        self.polls = 0
        self.ended = False
        """A poll saw the task end: its outcome and its poll count are recorded once."""


def _field(value: Any, name: str, alias: str | None = None) -> object:
    """A field of an SDK model or of a wire dict (`alias`: its camelCase key)."""
    if isinstance(value, Mapping):
        found = cast("Mapping[str, object]", value)
        return found.get(alias or name, found.get(name))
    return getattr(value, name, None)


def _status(result: Any) -> S.TaskStatus | None:
    status = _field(result, "status")
    return S.TaskStatus(status) if isinstance(status, str) and status in _STATUSES else None


class ClientTasks:
    """The tasks this process submitted (by id hash, the oldest forgotten first past the bound)."""

    def __init__(self, telemetry: Telemetry) -> None:
        self._telemetry = telemetry
        self._key = telemetry.settings.session_id_key
        self._privacy = telemetry.privacy
        self._handles: dict[str, Handle] = {}

    def submitted(self, result: Any, span: SpanContext, tool: str | None, asked: object) -> dict[str, Any] | None:
        """A `tools/call` reply: when it is a task handle, the attributes of its submission span
        (and the handle kept); None when it is not a task.

        `span`: the submission span's context; `tool`: its bounded tool label; `asked`: the name sent.
        """
        if _field(result, "result_type", "resultType") != "task":
            return None
        id_hash = task_id_hash(_field(result, "task_id", "taskId"), self._key)
        if id_hash is None:
            return None
        label = tool if tool != S.OTHER else None
        # as `spans.open` records a name it could not bound
        named = label if label is not None or asked is None else self._privacy.name(asked)
        handle = Handle(span, label, named)
        self._handles.pop(id_hash, None)  # a resubmitted id is the newest
        bounded.put(self._handles, id_hash, handle, S.MAX_CLIENT_TASKS)
        attrs: dict[str, Any] = {S.TASK_ID_HASH: id_hash}
        status = _status(result)
        if status is not None:
            attrs[S.TASK_STATUS] = status.value
        return attrs

    def opening(
        self, method: str, params: Mapping[str, Any] | None, attrs: dict[str, Any]
    ) -> tuple[Context | None, list[Link] | None, tuple[str, Handle | None] | None]:
        """A tasks/* request about to open its span: (its parent, its links, its task).

        The parent is the task's submission when this process made it (the caller's own span,
        if any, then a link), else None: the current context. Adds the task's id hash (and its
        tool) to `attrs`. The task: (id hash, the handle if this process submitted it), or None
        for a request naming no task (`tasks/list`).
        """
        id_hash = task_id_hash(params.get("taskId") if params else None, self._key)
        if id_hash is None:
            return None, None, None
        attrs[S.TASK_ID_HASH] = id_hash
        handle = self._handles.get(id_hash)
        if handle is None:
            return None, None, (id_hash, None)
        if handle.named is not None:
            attrs[S.GEN_AI_TOOL_NAME] = handle.named
        if method == "tasks/get":
            handle.polls += 1
        current = runtime_context.get_current()
        caller = trace.get_current_span(current).get_span_context()
        links = [Link(caller)] if caller.is_valid and caller.trace_id != handle.context.trace_id else None
        return trace.set_span_in_context(NonRecordingSpan(handle.context), current), links, (id_hash, handle)

    def replied(self, task: tuple[str, Handle | None], result: Any, context: Context) -> dict[str, Any] | None:
        """A tasks/* reply: the status it says, and the task's outcome on the poll that saw it end.

        `context`: the request span's, for an exemplar on the polls' record.
        """
        status = _status(result)
        if status is None:
            return None
        attrs: dict[str, Any] = {S.TASK_STATUS: status.value}
        if status.value not in _outcome.TERMINAL_STATUSES:
            return attrs
        handle = task[1]
        if handle is not None:
            if handle.ended:
                return attrs
            handle.ended = True
        # fastmcp-tasks inlines the result of a completed task; a tool that raised is `isError` there
        ended = _outcome.terminal(status, is_error=_outcome.is_error_result(_field(result, "result")))
        if ended is None:
            return attrs
        attrs[S.TASK_OUTCOME] = ended.value
        if handle is not None:
            labels: dict[str, Any] = {S.TASK_OUTCOME: ended.value}
            if handle.tool is not None:
                labels[S.GEN_AI_TOOL_NAME] = handle.tool
            _metrics.of(self._telemetry).polls.record(handle.polls, labels, context=context)
        return attrs
