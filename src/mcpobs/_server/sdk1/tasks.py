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
from collections.abc import Callable
from typing import Any, cast

from opentelemetry import context as otel_context
from opentelemetry import metrics, trace
from opentelemetry.trace import Link, Span, SpanKind

from mcpobs import semconv as S
from mcpobs._core import outcome as _outcome
from mcpobs._core import propagation as _propagation
from mcpobs._core.guard import guarded, report
from mcpobs._core.outcome import Classification
from mcpobs._core.patches import Patch
from mcpobs._core.telemetry import Telemetry, end_once
from mcpobs._core.wire_values import as_mapping
from mcpobs._server import state as _state
from mcpobs._tasks.ids import task_id_hash
from mcpobs._version import __version__
from mcpobs.semconv import TaskOutcome

SYSTEM_MCP = "mcp"
"""`messaging.system` of the 1.x SDK's in-process tasks (the registry's value)."""
SYSTEM_DOCKET = "pydocket"

MAX_RUNS = 4096
"""Tasks remembered per process: the oldest are forgotten first (a poll for one then links nothing)."""

_TERMINAL_STATUS = {
    S.TaskStatus.COMPLETED.value: TaskOutcome.OK,
    S.TaskStatus.FAILED.value: TaskOutcome.TOOL_ERROR,
    S.TaskStatus.CANCELLED.value: TaskOutcome.CANCELLED,
}
"""A terminal status on the 1.x wire read as the task's outcome: a failed task is its tool's failure."""

_LEG_OUTCOME = {
    TaskOutcome.OK: _outcome.OK,
    TaskOutcome.TOOL_ERROR: _outcome.TOOL_ERROR,
    TaskOutcome.CANCELLED: _outcome.CANCELLED,
}


class Instruments:
    """The task metrics of one `Telemetry` (made on first use)."""

    def __init__(self, telemetry: Telemetry) -> None:
        meter = metrics.get_meter(S.INSTRUMENTATION_NAME, __version__, telemetry.providers()[1])

        def histogram(spec: S.MetricSpec) -> Any:
            buckets = list(spec.buckets) if spec.buckets else None
            return meter.create_histogram(
                spec.name, unit=spec.unit, description=spec.brief, explicit_bucket_boundaries_advisory=buckets
            )

        self.duration = histogram(S.TASK_DURATION)
        self.queue_wait = histogram(S.TASK_QUEUE_WAIT)
        self.leg_duration = histogram(S.TASK_LEG_DURATION)
        self.in_flight = meter.create_up_down_counter(
            S.TASKS_IN_FLIGHT.name, unit=S.TASKS_IN_FLIGHT.unit, description=S.TASKS_IN_FLIGHT.brief
        )


_instruments: dict[int, Instruments] = {}


def instruments(telemetry: Telemetry) -> Instruments:
    found = _instruments.get(id(telemetry))
    if found is None:
        found = _instruments[id(telemetry)] = Instruments(telemetry)
    return found


class Run:
    """One task this process submitted: from its submission to its one terminal outcome."""

    __slots__ = ("context", "id_hash", "labels", "leg_context", "legs", "submitted", "telemetry", "terminal", "tool")

    def __init__(self, telemetry: Telemetry, tool: str, system: str, context: Any) -> None:
        self.telemetry = telemetry
        self.tool = tool
        self.labels = {S.GEN_AI_TOOL_NAME: tool, S.MESSAGING_SYSTEM: system}
        self.context = context
        """The job's context: the `create` span's (a leg's parent and link)."""
        self.leg_context: Any = None
        """The running leg's context, while it runs (a relayed request's parent)."""
        self.submitted = time.time()
        self.id_hash: str | None = None
        self.legs = 0
        self.terminal: TaskOutcome | None = None

    def created(self, task_id: object) -> None:
        self.id_hash = task_id_hash(task_id, self.telemetry.settings.session_id_key)
        if self.id_hash is not None:
            remember(self.id_hash, self)
        instruments(self.telemetry).in_flight.add(1, self.labels)

    def ended(self, found: TaskOutcome, attrs: dict[str, Any], by: S.TaskCanceller | None = None) -> None:
        """The task's terminal outcome, once: onto `attrs` (the caller writes them on its span), and its metrics."""
        if self.terminal is not None:
            return
        self.terminal = found
        attrs[S.TASK_OUTCOME] = found.value
        labels: dict[str, Any] = {**self.labels, S.TASK_OUTCOME: found.value}
        if by is not None:
            attrs[S.TASK_CANCELLED_BY] = labels[S.TASK_CANCELLED_BY] = by.value
        if found in S.TASK_ERROR_OUTCOMES:
            labels[S.ERROR_TYPE] = S.TOOL_ERROR
        tools = instruments(self.telemetry)
        tools.duration.record(max(0.0, time.time() - self.submitted), labels)
        tools.in_flight.add(-1, self.labels)


RUNS: OrderedDict[str, Run] = OrderedDict()


def remember(id_hash: str, run: Run) -> None:
    RUNS[id_hash] = run
    RUNS.move_to_end(id_hash)
    while len(RUNS) > MAX_RUNS:
        RUNS.popitem(last=False)


def run_of(task_id: object, telemetry: Telemetry) -> Run | None:
    id_hash = task_id_hash(task_id, telemetry.settings.session_id_key)
    return RUNS.get(id_hash) if id_hash is not None else None


# -- the hop ----------------------------------------------------------------------------------------


def hop_attributes(tool: str, system: str, operation: str) -> dict[str, Any]:
    return {
        S.MESSAGING_SYSTEM: system,
        S.MESSAGING_OPERATION_TYPE: operation,
        S.MESSAGING_OPERATION_NAME: operation,
        S.MESSAGING_DESTINATION_NAME: tool,
        S.GEN_AI_TOOL_NAME: tool,
    }


def create_span(telemetry: Telemetry, tool: str, system: str) -> tuple[Span, Run]:
    """The PRODUCER `create <tool>` span, a child of what is current (the tools/call SERVER span)."""
    span = telemetry.start_span(
        S.task_hop_span_name("create", tool), None, SpanKind.PRODUCER, hop_attributes(tool, system, "create")
    )
    return span, Run(telemetry, tool, system, trace.set_span_in_context(span))


def end_create(span: Span, run: Run, task_id: object, status: object, exc: BaseException | None) -> None:
    attrs: dict[str, Any] = {}
    cls = _outcome.OK
    if exc is None:
        run.created(task_id)
        if run.id_hash is not None:
            attrs[S.TASK_ID_HASH] = run.id_hash
        if isinstance(status, str):
            attrs[S.TASK_STATUS] = status
    else:
        cls = _outcome.CANCELLED if _outcome.is_cancellation(exc) else _outcome.crash(exc)
    if span.is_recording():
        _outcome.write(span, cls, attrs)
    span.end()


class Leg:
    """One execution of a task's work: its CONSUMER `process <tool>` span, current while it runs."""

    __slots__ = ("attrs", "run", "span", "start", "system", "tokens")

    def __init__(self, run: Run, system: str, parent: Any, task_id: object, started: float | None = None) -> None:
        self.run = run
        self.system = system
        run.legs += 1
        if run.id_hash is None:  # a worker rebuilding the run: the id from the job
            run.id_hash = task_id_hash(task_id, run.telemetry.settings.session_id_key)
        attrs = hop_attributes(run.tool, system, "process")
        attrs[S.TASK_LEG] = run.legs
        if run.id_hash is not None:
            attrs[S.TASK_ID_HASH] = run.id_hash
        job = trace.get_current_span(parent).get_span_context()
        links = [Link(job)] if job.is_valid else None
        self.span = run.telemetry.start_span(
            S.task_hop_span_name("process", run.tool), parent, SpanKind.CONSUMER, attrs, links
        )
        self.start = time.time()
        self.attrs: dict[str, Any] = {}
        if run.legs == 1:
            instruments(run.telemetry).queue_wait.record(max(0.0, self.start - run.submitted), run.labels)
        run.leg_context = trace.set_span_in_context(self.span)
        # Inside the work no request is current: the tools/call it came from was answered long ago.
        self.tokens = (_state.enter(None), otel_context.attach(run.leg_context))

    def leave(self) -> None:
        otel_context.detach(self.tokens[1])
        _state.leave(self.tokens[0])

    def end(self, found: TaskOutcome, terminal: bool) -> None:
        """End the leg as `found`; the task's terminal outcome too when `terminal`."""
        run, span = self.run, self.span
        run.leg_context = None
        cls: Classification = _LEG_OUTCOME.get(found, _outcome.TOOL_ERROR)
        attrs = self.attrs
        if terminal:
            run.ended(found, attrs)
        labels: dict[str, Any] = {**run.labels, S.OUTCOME: cls.outcome_value}
        if cls.error_type is not None:
            labels[S.ERROR_TYPE] = cls.error_type
        try:
            if span.is_recording():
                _outcome.write(span, cls, attrs)
            span.end()
        except Exception as err:
            report("task leg span end", err)
            end_once(span)
        instruments(run.telemetry).leg_duration.record(max(0.0, time.time() - self.start), labels)


def outcome_of_exception(exc: BaseException) -> TaskOutcome:
    return TaskOutcome.CANCELLED if _outcome.is_cancellation(exc) else TaskOutcome.TOOL_ERROR


# -- the 1.x SDK's run_task ------------------------------------------------------------------------


def run_task_wrapper(telemetry: Telemetry, name_tool_late: Callable[[], None]) -> Any:
    """`name_tool_late`: the tool call in flight takes its tool's name (`dispatch.name_tool_late`)."""

    async def run_task(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `Experimental.run_task(work, ...)`: the `create` span, and the work in its `process` span."""
        span = run = None
        try:
            name_tool_late()
            state = _state.current()
            tool = state.tool if state is not None and state.tool else S.OTHER
            span, run = create_span(telemetry, tool, SYSTEM_MCP)
            work = args[0] if args else kwargs["work"]
            observed = _observed(run, work)
            if args:
                args = (observed, *args[1:])
            else:
                kwargs = {**kwargs, "work": observed}
        except Exception as exc:
            report("task create", exc)
        if span is None or run is None:
            return await wrapped(*args, **kwargs)
        token = otel_context.attach(run.context)
        try:
            result = await wrapped(*args, **kwargs)
        except BaseException as exc:
            otel_context.detach(token)
            with guarded("task create end"):
                end_create(span, run, None, None, exc)
            raise
        otel_context.detach(token)
        with guarded("task create end"):
            task = getattr(result, "task", None)
            end_create(span, run, getattr(task, "taskId", None), getattr(task, "status", None), None)
        return result

    return run_task


def _observed(run: Run, work: Any) -> Any:
    async def observed(task: Any) -> Any:
        leg = None
        try:
            leg = Leg(run, SYSTEM_MCP, run.context, getattr(task, "task_id", None))
        except Exception as exc:
            report("task leg start", exc)
        if leg is None:
            return await work(task)
        try:
            result = await work(task)
        except BaseException as exc:
            leg.leave()
            with guarded("task leg end"):
                leg.end(outcome_of_exception(exc), True)
            raise
        leg.leave()
        with guarded("task leg end"):
            status = getattr(getattr(task, "task", None), "status", None)
            if status in _TERMINAL_STATUS:  # the work ended it itself (`task.fail`, `task.complete`), or a cancel did
                found = _TERMINAL_STATUS[status]
            else:
                found = TaskOutcome.TOOL_ERROR if getattr(result, "isError", False) is True else TaskOutcome.OK
            leg.end(found, True)
        return result

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
    run = RUNS.get(id_hash)
    attrs: dict[str, Any] = {S.TASK_ID_HASH: id_hash}
    status = getattr(result, "status", None)
    if isinstance(status, str):
        attrs[S.TASK_STATUS] = status
    if call.method == "tasks/result":
        failed = getattr(result, "isError", False) is True or (
            run is not None and run.terminal in S.TASK_ERROR_OUTCOMES
        )
        if failed:  # the task's failure, as the client sees it: not a failed request
            call.state.tool_failure = _outcome.TOOL_ERROR
            attrs[S.TASK_OUTCOME] = TaskOutcome.TOOL_ERROR.value
        elif run is not None and run.terminal is not None:
            attrs[S.TASK_OUTCOME] = run.terminal.value
    elif call.method == "tasks/cancel" and status == S.TaskStatus.CANCELLED.value and run is not None:
        run.ended(TaskOutcome.CANCELLED, attrs, S.TaskCanceller.CLIENT)
    if call.span.is_recording():
        call.span.set_attributes(attrs)


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
