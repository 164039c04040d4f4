"""mcp 1.x: tasks (SEP-1686) a server creates and runs, as the messaging conventions draw a queue hop.

- The 1.x SDK's `Experimental.run_task` is wrapped: a PRODUCER `create <tool>` span, a child of the
  tools/call SERVER span, is current while the task is created and its work spawned; the `work`
  it is handed runs inside a CONSUMER `process <tool>` span whose parent is that context (and a
  link to it), with the leg's outcome and, where the task ended, its terminal outcome
  (`mcpobs.task.outcome`) and the task metrics. The work runs in the SDK's task group with the
  request's contextvars copied, the request long answered: inside it, no request is current.
- A tools/call answered with a `CreateTaskResult` (lowlevel or FastMCP 3) is a submission that
  succeeded: `ok`, with the task's id hash and status (`submitted`, called from `dispatch.py`).
- tasks/get, tasks/result, tasks/cancel answered (`answered`): their task's id hash and status; a
  `tasks/result` of a task whose work failed is that failure (`tool_error`), as the client sees
  it; a cancel ends the task `cancelled` there (the 1.x SDK only marks it: the work runs on).

The runs this process submitted are kept by hashed id (`RUNS`, bounded) so that a poll, a cancel,
a relayed elicitation (`_hosts/sdk1/fastmcp3_tasks.py`) find their task. The raw id is never kept.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, cast

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context

from mcpobs import semconv as S
from mcpobs._core import outcome as _outcome
from mcpobs._core import propagation as _propagation
from mcpobs._core.guard import guarded, report
from mcpobs._core.patches import Patch
from mcpobs._core.telemetry import Telemetry
from mcpobs._core.wire_values import as_mapping
from mcpobs._server import state as _state
from mcpobs._tasks import outcome as _task_outcome
from mcpobs._tasks.hop import Creating
from mcpobs._tasks.ids import task_id_hash
from mcpobs._tasks.task import TaskRun
from mcpobs.semconv import TaskOutcome

MAX_RUNS = 4096
"""Tasks remembered per process: the oldest are forgotten first (a poll for one then finds nothing)."""


class Submitted:
    """A task this process submitted (or a worker rebuilt from its job): its `TaskRun`, the job's
    context, its legs, and whether its end was recorded (by its last leg, or by a cancel)."""

    __slots__ = ("context", "leg_context", "legs", "outcome", "run")

    def __init__(self, run: TaskRun, context: Context | None) -> None:
        self.run = run
        self.context = context
        """The job's context: the `create` span's (a leg's parent and link)."""
        self.leg_context: Context | None = None
        """The running leg's context, while it runs (a request relayed for it is sent under it)."""
        self.legs = 0
        self.outcome: TaskOutcome | None = None
        """How the task ended, once recorded (by its last leg here, or by a cancel)."""

    def remember(self) -> None:
        id_hash = self.run.id_hash
        if id_hash is not None:
            RUNS[id_hash] = self
            RUNS.move_to_end(id_hash)
            while len(RUNS) > MAX_RUNS:
                RUNS.popitem(last=False)

    def end(self, outcome: TaskOutcome, span: Any, by: S.TaskCanceller | None = None) -> None:
        """The task ended here (a cancel): recorded once."""
        if self.outcome is None:
            self.outcome = outcome
            self.run.ended(outcome, span, by)

    async def leg(self, body: Any, is_error: Callable[[Any], bool], cancel_ends_it: bool = False) -> Any:
        """Run `body()` as the task's next leg: its `process` span current, no request current inside.

        `cancel_ends_it`: nothing but the server's side cancels the work (the 1.x SDK's session
        ending: its `tasks/cancel` only marks the task), so a cancelled leg no cancel recorded ends
        the task `cancelled` by the server. Under pydocket a client's cancel cancels the leg too,
        in either order with its answer: the cancel records the end."""
        leg = None
        try:
            self.legs += 1
            leg = self.run.leg(self.legs, self.context)
        except Exception as exc:
            report("task leg start", exc)
        if leg is None:
            return await body()
        with leg:
            self.leg_context = otel_context.get_current()
            token = _state.enter(None)  # the request that submitted it was answered long ago
            try:
                result = await body()
            except BaseException as exc:
                with guarded("task leg end"):
                    self.leg_context = None
                    if _outcome.is_cancellation(exc):
                        if cancel_ends_it:
                            self.end(TaskOutcome.CANCELLED, leg.span, S.TaskCanceller.SERVER)
                        leg.fail(exc)
                    else:
                        self.outcome = TaskOutcome.TOOL_ERROR
                        leg.tool_raised(exc)
                        leg.stop(is_error=True)
                raise
            finally:
                _state.leave(token)
        with guarded("task leg end"):
            self.leg_context = None
            if self.outcome is not None:  # cancelled while it ran (the 1.x SDK only marks it): the leg ran on
                import anyio

                leg.fail(anyio.get_cancelled_exc_class()())
            else:
                failed = is_error(result)
                self.outcome = TaskOutcome.TOOL_ERROR if failed else TaskOutcome.OK
                leg.stop(is_error=failed)
        return result


RUNS: OrderedDict[str, Submitted] = OrderedDict()


def run_of(task_id: object, telemetry: Telemetry) -> Submitted | None:
    id_hash = task_id_hash(task_id, telemetry.settings.session_id_key)
    return RUNS.get(id_hash) if id_hash is not None else None


def submitting(telemetry: Telemetry, tool: str | None, system: str) -> tuple[Submitted, Creating]:
    """A task about to be created: its run, and its `create` span (opened now, current inside `with`)."""
    run = TaskRun(telemetry, tool, system, None, created_ns=time.time_ns())
    creating = run.creating()
    return Submitted(run, trace.set_span_in_context(creating.span)), creating


def created(submitted: Submitted, span: Any, task: Any) -> None:
    """The task was created (`task`: the SDK's `Task`): its id hashed onto the `create` span, remembered."""
    run = submitted.run
    run.id_hash = task_id_hash(getattr(task, "taskId", None), run.telemetry.settings.session_id_key)
    attrs = run.submission_attributes(getattr(task, "status", None))
    if attrs and span.is_recording():
        span.set_attributes(attrs)
    run.submitted()
    submitted.remember()


async def enqueued(found: tuple[Submitted, Creating], enqueue: Callable[[], Awaitable[Any]]) -> Any:
    """Run the host's `enqueue()` inside the `create` span and note the task it created (the
    result's `task`, the SDK's `CreateTaskResult`): the one way both 1.x seams submit."""
    submitted, creating = found
    with creating as span:
        result = await enqueue()
        with guarded("task created"):
            created(submitted, span, getattr(result, "task", None))
    return result


# -- the 1.x SDK's run_task ------------------------------------------------------------------------


def run_task_wrapper(telemetry: Telemetry, name_tool_late: Callable[[], None]) -> Any:
    """`name_tool_late`: the tool call in flight takes its tool's name (`dispatch.name_tool_late`)."""

    async def run_task(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `Experimental.run_task(work, ...)`: the `create` span, and the work in its `process` span."""
        found = None
        try:
            name_tool_late()
            state = _state.current()
            found = submitting(telemetry, state.tool if state is not None else None, S.MessagingSystem.MCP.value)
            work = args[0] if args else kwargs["work"]
            observed = _observed(found[0], work)
            if args:
                args = (observed, *args[1:])
            else:
                kwargs = {**kwargs, "work": observed}
        except Exception as exc:
            report("task create", exc)
        if found is None:
            return await wrapped(*args, **kwargs)
        return await enqueued(found, lambda: wrapped(*args, **kwargs))

    return run_task


def _observed(submitted: Submitted, work: Any) -> Any:
    async def observed(task: Any) -> Any:
        def is_error(result: Any) -> bool:
            # the work ended the task itself (`task.fail`), or returned an error result
            status = getattr(getattr(task, "task", None), "status", None)
            return status == S.TaskStatus.FAILED.value or _task_outcome.is_error_result(result)

        return await submitted.leg(lambda: work(task), is_error, cancel_ends_it=True)

    return observed


# -- requests about tasks, answered ----------------------------------------------------------------


def submitted(call: Any, result: Any, telemetry: Telemetry) -> None:
    """A tools/call answered with a task (`CreateTaskResult`): a submission, its id hashed."""
    task = getattr(result, "task", None)
    if task is None or not call.span.is_recording():
        return
    attrs: dict[str, Any] = {}
    id_hash = task_id_hash(getattr(task, "taskId", None), telemetry.settings.session_id_key)
    if id_hash is not None:
        attrs[S.TASK_ID_HASH] = id_hash
    status = getattr(task, "status", None)
    if isinstance(status, str):
        attrs[S.TASK_STATUS] = status
    call.span.set_attributes(attrs)


TASK_METHODS = frozenset({"tasks/get", "tasks/result", "tasks/cancel"})


def answered(call: Any, params: Any, result: Any, telemetry: Telemetry) -> None:
    """A tasks/get, tasks/result or tasks/cancel about to be answered: its task's hash, status, outcome."""
    found = as_mapping(params)
    task_id = found.get("taskId") if found is not None else None
    id_hash = task_id_hash(task_id, telemetry.settings.session_id_key)
    if id_hash is None:
        return
    submitted = RUNS.get(id_hash)
    attrs: dict[str, Any] = {S.TASK_ID_HASH: id_hash}
    status = getattr(result, "status", None)
    if isinstance(status, str):
        attrs[S.TASK_STATUS] = status
    if call.method == "tasks/result":
        failed = _task_outcome.is_error_result(result) or (
            submitted is not None and submitted.outcome is TaskOutcome.TOOL_ERROR
        )
        if failed:  # the task's failure, as the client sees it: not a failed request
            call.state.tool_failure = _outcome.TOOL_ERROR
            attrs[S.TASK_OUTCOME] = TaskOutcome.TOOL_ERROR.value
        elif submitted is not None and submitted.outcome is not None:
            attrs[S.TASK_OUTCOME] = submitted.outcome.value
    if call.span.is_recording():
        call.span.set_attributes(attrs)
    if call.method == "tasks/cancel" and status == S.TaskStatus.CANCELLED.value and submitted is not None:
        submitted.end(TaskOutcome.CANCELLED, call.span, S.TaskCanceller.CLIENT)


_RELATED_TASK = "io.modelcontextprotocol/related-task"


def in_task_request(telemetry: Telemetry) -> Any:
    baggage = telemetry.settings.send_baggage

    def built(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ServerSession._build_*_request`: a request a task's work queues for its client (sent
        later, raw, by a tasks/result) carries the work's trace context, so the client's answer is in the task."""
        request = wrapped(*args, **kwargs)
        with guarded("task request context"):
            params = as_mapping(getattr(request, "params", None))
            meta = params.get("_meta") if params is not None else None
            if isinstance(meta, dict) and _RELATED_TASK in meta and "traceparent" not in meta:
                _propagation.inject(cast("dict[str, Any]", meta), baggage=baggage)
        return request

    return built


def patches(telemetry: Telemetry, name_tool_late: Callable[[], None]) -> list[Patch]:
    from mcpobs._core import inventory as I

    built = in_task_request(telemetry)
    return [
        Patch.of(I.SERVER1_RUN_TASK, run_task_wrapper(telemetry, name_tool_late)),
        Patch.of(I.SERVER1_BUILD_ELICIT, built),
        Patch.of(I.SERVER1_BUILD_ELICIT_URL, built),
        Patch.of(I.SERVER1_BUILD_SAMPLING, built),
    ]
