"""mcp 1.x: the tasks (SEP-1686) a client submits, and the tasks/* requests it sends for them.

`session.experimental.call_tool_as_task/get_task/get_task_result/list_tasks/cancel_task/poll_task`
and FastMCP 3's `ToolTask` all send through `ClientSession.send_request` (`session.py`), which
asks this module three things:

- `parent`: a tasks/* request for a task this process submitted is sent as a child of the
  submission's CLIENT span, so its traceparent puts the server's span in the task's trace too;
- `replied`: a tools/call answered with a task is a submission (`ok`, its id hashed, its status),
  remembered here (a bounded map: the hash, never the id, to the call's span context); a
  tasks/get, tasks/result or tasks/cancel that sees the task end carries its outcome, once (the
  same value the server recorded: a failed task is its tool's failure), with the polls it took;
- `failed`: the 1.x SDK cannot parse the empty `tasks/result` of a failed task (a
  `ValidationError` against `CallToolResult`): that is the task's failure, `tool_error`, not a
  server error.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext

from mcpobs import semconv as S
from mcpobs._client import classify
from mcpobs._client.calls import ClientCall
from mcpobs._core import bounded
from mcpobs._core.telemetry import Telemetry
from mcpobs._tasks import metrics
from mcpobs._tasks import outcome as _outcome
from mcpobs._tasks.ids import task_id_hash
from mcpobs.semconv import TaskOutcome


def _terminal(status: object) -> TaskOutcome | None:
    """The outcome a status says on the 1.x line, where a `failed` task is its tool's failure."""
    return _outcome.terminal(status, tool_raised=True)


METHODS = frozenset({"tasks/get", "tasks/result", "tasks/cancel"})


class Handle:
    """A task this process submitted: its submission's span context, tool, polls, what was seen of it."""

    __slots__ = ("context", "ended", "polls", "status", "tool")

    def __init__(self, context: SpanContext, tool: str) -> None:
        self.context = context
        self.tool = tool
        self.polls = 0
        self.status: str | None = None
        self.ended = False


class ClientTasks:
    """The tasks one `instrument()`'s clients submitted, by hashed id."""

    def __init__(self, telemetry: Telemetry) -> None:
        self.key = telemetry.settings.session_id_key
        self.telemetry = telemetry
        self.handles: dict[str, Handle] = {}
        """The last `semconv.MAX_CLIENT_TASKS` tasks submitted, as on the 2.x client (`_client/tasks.py`):
        the oldest are forgotten first (their polls are then roots of their own)."""

    def _handle(self, request: Any) -> tuple[str | None, Handle | None]:
        params = getattr(request, "params", None)
        id_hash = task_id_hash(getattr(params, "taskId", None), self.key)
        return id_hash, (self.handles.get(id_hash) if id_hash is not None else None)

    def parent(self, method: str, request: Any) -> Any:
        """The context a tasks/* request for a task submitted here is sent in (None: the current one)."""
        if method not in METHODS:
            return None
        _, handle = self._handle(request)
        if handle is None:
            return None
        return trace.set_span_in_context(NonRecordingSpan(handle.context))

    def replied(self, call: ClientCall, method: str, request: Any, result: Any) -> None:
        result = getattr(result, "root", result)  # FastMCP 3 asks for a RootModel of the union
        if method == "tools/call":
            task = getattr(result, "task", None)
            if task is not None:
                self._submitted(call, task)
            return
        if method not in METHODS:
            return
        id_hash, handle = self._handle(request)
        if id_hash is None:
            return
        attrs = self._extra(call)
        attrs[S.TASK_ID_HASH] = id_hash
        status = getattr(result, "status", None)
        if isinstance(status, str):
            attrs[S.TASK_STATUS] = status
        if method == "tasks/get" and handle is not None:
            handle.polls += 1
        if method == "tasks/result":  # answered once the task is over: its result, or its tool's error
            if getattr(result, "isError", False) is True:  # FastMCP 3's failed task
                call.cls = classify.TOOL_ERROR
                self._ended(call, handle, TaskOutcome.TOOL_ERROR)
            elif handle is not None and (ended := _terminal(handle.status)) is not None:
                self._ended(call, handle, ended)
            else:
                self._ended(call, handle, TaskOutcome.OK)
            return
        if isinstance(status, str) and handle is not None:
            handle.status = status
            found = _terminal(status)
            if found is not None:
                by = S.TaskCanceller.CLIENT if method == "tasks/cancel" else None
                self._ended(call, handle, found, by)

    def failed(self, call: ClientCall, method: str, request: Any, exc: BaseException) -> None:
        """A tasks/result whose payload the SDK could not parse as the tool's result: the task failed."""
        if method != "tasks/result" or type(exc).__name__ != "ValidationError":
            return
        id_hash, handle = self._handle(request)
        if handle is None or handle.status not in (None, S.TaskStatus.FAILED.value):
            return
        call.cls = classify.TOOL_ERROR
        call.description = None
        self._extra(call)[S.TASK_ID_HASH] = id_hash
        handle.status = S.TaskStatus.FAILED.value
        self._ended(call, handle, TaskOutcome.TOOL_ERROR)

    def _submitted(self, call: ClientCall, task: Any) -> None:
        id_hash = task_id_hash(getattr(task, "taskId", None), self.key)
        if id_hash is None:
            return
        tool = call.labels_key[3] or S.OTHER
        self.handles.pop(id_hash, None)  # a resubmitted id is the newest
        bounded.put(self.handles, id_hash, Handle(call.span.get_span_context(), tool), S.MAX_CLIENT_TASKS)
        attrs = self._extra(call)
        attrs[S.TASK_ID_HASH] = id_hash
        status = getattr(task, "status", None)
        if isinstance(status, str):
            attrs[S.TASK_STATUS] = status

    def _ended(
        self, call: ClientCall, handle: Handle | None, found: TaskOutcome, by: S.TaskCanceller | None = None
    ) -> None:
        """The task's outcome on the request that saw it end (a poll: once per task; its result: always),
        and the polls it took, once."""
        attrs = self._extra(call)
        if handle is None or call.method == "tasks/result":
            attrs[S.TASK_OUTCOME] = found.value
        if handle is None or handle.ended:
            return
        handle.ended = True
        attrs[S.TASK_OUTCOME] = found.value
        if by is not None:
            attrs[S.TASK_CANCELLED_BY] = by.value
        labels = {S.GEN_AI_TOOL_NAME: handle.tool, S.TASK_OUTCOME: found.value}
        metrics.of(self.telemetry).polls.record(handle.polls, labels)

    @staticmethod
    def _extra(call: ClientCall) -> dict[str, Any]:
        if call.extra is None:
            call.extra = {}
        return call.extra


_IN_TASK = "task-"


def request_id(value: object, key: bytes | None) -> object:
    """A request id as recorded: the 1.x SDK's in-task request ids (`task-<task id>-<n>`) hold the
    task id, kept as its hash (`task-<hash>-<n>`); any other id as it is."""
    if not isinstance(value, str) or not value.startswith(_IN_TASK):
        return value
    task_id, _, n = value[len(_IN_TASK) :].rpartition("-")
    id_hash = task_id_hash(task_id, key)
    return f"{_IN_TASK}{id_hash}-{n}" if id_hash is not None else _IN_TASK
