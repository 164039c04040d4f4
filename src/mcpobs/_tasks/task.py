"""One task's life as one process sees it, owned by one object.

A `TaskRun` is made where something happens to a task: where it is submitted (the server
that enqueues it), where a leg runs (a worker, often another process: the run is rebuilt there
from the job), where it is cancelled. It owns the task's telemetry the way an invocation object
of opentelemetry-util-genai owns its span: the adapters of each line say what happened
(`submitted`, `creating`, `leg`/`Leg.stop`/`Leg.fail`, `ended`) and never write a task
attribute or a task metric themselves.

Times are wall-clock nanoseconds (`time.time_ns()`): submission and the first leg are in
different processes, often on different machines, so the queue wait and the task's duration
are as good as the machines' clocks agree. A leg's own duration is one process's monotonic clock.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from contextvars import ContextVar
from types import TracebackType
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span

from mcpobs import semconv as S
from mcpobs._core import outcome as _core_outcome
from mcpobs._core import stop as _stop
from mcpobs._core.guard import report
from mcpobs._core.outcome import Classification
from mcpobs._core.telemetry import Telemetry, end_once
from mcpobs._tasks import hop, metrics
from mcpobs._tasks import outcome as _outcome
from mcpobs._tasks.ids import task_id_hash
from mcpobs.semconv import TaskCanceller, TaskOutcome

_NS = 1e9


class TaskRun:
    """One task in this process: its hashed id, its tool and queue, its metric labels."""

    __slots__ = ("_labels", "_metrics", "created_ns", "id_hash", "system", "telemetry", "tool")

    def __init__(
        self,
        telemetry: Telemetry,
        tool: str | None,
        system: str,
        task_id: object,
        *,
        created_ns: int | None = None,
        server_version: object = None,
    ) -> None:
        self.telemetry = telemetry
        self.tool = S.bounded_target(tool) if tool else S.OTHER
        self.system = system
        self.id_hash = task_id_hash(task_id, telemetry.settings.session_id_key)
        self.created_ns = created_ns
        """When the task was submitted (wall clock), where known: for its queue wait and duration."""
        self._metrics = metrics.of(telemetry)
        self._labels = metrics.labels(self.tool, system, server_version)

    def submission_attributes(self, status: object) -> dict[str, Any]:
        """What a span about this task takes (the creating `tools/call`, a `tasks/*` request): the
        hashed id, and the status it answered with when it says one."""
        attrs: dict[str, Any] = {}
        if self.id_hash is not None:
            attrs[S.TASK_ID_HASH] = self.id_hash
        if isinstance(status, str) and status in S.TaskStatus._value2member_map_:
            attrs[S.TASK_STATUS] = status
        return attrs

    def submitted(self) -> None:
        """The task exists: one more in flight (one less where it ends)."""
        self._metrics.in_flight.add(1, self._labels)

    def creating(self, leg: int | None = 1) -> hop.Creating:
        """`with run.creating():` around the enqueueing of the task (or of its next leg)."""
        return hop.Creating(self.telemetry, self.tool, self.system, self.id_hash, leg)

    def leg(self, number: int, job_context: Context | None) -> Leg:
        """One execution leg, started now (`with run.leg(...) as leg:` makes its span current)."""
        return Leg(self, number, job_context)

    def ended(
        self,
        outcome: TaskOutcome,
        span: Span | None = None,
        cancelled_by: TaskCanceller | None = None,
        error_type: str | None = None,
        at_ns: int | None = None,
    ) -> None:
        """The task ended as `outcome`, here: its outcome on `span` (the span where it ended) and
        its duration, counted once. Call it in one place per task: the leg that finished it, or
        the cancel."""
        error = error_type or _outcome.error_type(outcome)
        if span is not None and span.is_recording():
            attrs: dict[str, Any] = {S.TASK_OUTCOME: outcome.value}
            if cancelled_by is not None:
                attrs[S.TASK_CANCELLED_BY] = cancelled_by.value
            if self.id_hash is not None:
                attrs[S.TASK_ID_HASH] = self.id_hash
            span.set_attributes(attrs)
        self._metrics.in_flight.add(-1, self._labels)
        if self.created_ns is not None:
            seconds = max(0.0, ((at_ns or time.time_ns()) - self.created_ns) / _NS)
            labels = metrics.with_outcome(
                self._labels,
                **{S.TASK_OUTCOME: outcome.value, S.TASK_CANCELLED_BY: cancelled_by and cancelled_by.value},
                **{S.ERROR_TYPE: error},
            )
            self._metrics.duration.record(seconds, labels)

    def queue_waited(self, started_ns: int) -> None:
        if self.created_ns is not None:
            self._metrics.queue_wait.record(max(0.0, (started_ns - self.created_ns) / _NS), self._labels)

    def leg_took(self, seconds: float, cls: Classification) -> None:
        labels: Mapping[str, Any] = metrics.with_outcome(
            self._labels, **{S.OUTCOME: cls.outcome_value, S.ERROR_TYPE: cls.error_type}
        )
        self._metrics.leg_duration.record(seconds, labels)


_current_leg: ContextVar[Leg | None] = ContextVar("mcpobs_task_leg", default=None)

current_leg = _current_leg.get
"""The leg running in this context, if any: what a progress report in a worker is under."""


class Leg:
    """One execution of a task in a worker: a CONSUMER `process <tool>` span, its outcome, its time.

    `with leg:` makes the span current (so progress reports and the tool's own spans nest under
    it) and this leg the `current_leg()`. The adapter says how it ended: `asked_input()`,
    `tool_raised(exc)` while the body runs, then `stop(is_error=...)` or `fail(exc)` once.
    The first leg records the task's queue wait; a leg that finishes the task records its end.
    """

    __slots__ = (
        "_asked",
        "_done",
        "_exception",
        "_started",
        "_tokens",
        "number",
        "progress_dropped",
        "progress_spans",
        "run",
        "span",
    )

    def __init__(self, run: TaskRun, number: int, job_context: Context | None) -> None:
        self.run = run
        self.number = number
        now = time.time_ns()
        self._started = time.perf_counter()
        self.span = hop.start_process(run.telemetry, run.tool, run.system, job_context, run.id_hash, number, now)
        if number == 1:
            run.queue_waited(now)
        self._asked = False
        self._exception: BaseException | None = None
        self._done = False
        self._tokens: tuple[object, object] | None = None
        self.progress_spans = 0
        self.progress_dropped = 0
        _stop.enter(self, self._stopped)  # a worker stopping under it ends it `stopped` (`_core/stop.py`)

    def progress_recorded(self, cap: int) -> bool:
        """Count a progress report in this leg: True while it is under `cap` (a span for it),
        False past it (`progress_dropped` counts those)."""
        if self.progress_spans >= cap:
            self.progress_dropped += 1
            return False
        self.progress_spans += 1
        return True

    def __enter__(self) -> Leg:
        try:
            self._tokens = (otel_context.attach(trace.set_span_in_context(self.span)), _current_leg.set(self))
        except Exception as exc:
            report("task leg context", exc)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        try:
            if self._tokens is not None:
                _current_leg.reset(self._tokens[1])  # type: ignore[arg-type]
                otel_context.detach(self._tokens[0])  # type: ignore[arg-type]
        except Exception as failure:
            report("task leg context", failure)

    def asked_input(self) -> None:
        """The body returned a request for input: the leg ends `pending_input`, the task waits."""
        self._asked = True

    def tool_raised(self, exc: BaseException) -> None:
        """The tool raised (the line then hands back an error result): recorded on the leg's span."""
        self._exception = exc

    def stop(self, *, is_error: bool = False) -> None:
        """The leg returned: ok, tool_error, or pending_input; a leg that did not ask ends the task."""
        cls = _outcome.leg(is_error=is_error, asked_input=self._asked)
        self._end(cls, self._exception if cls.is_error else None)

    def fail(self, exc: BaseException) -> None:
        """The leg raised: cancelled (the task's cancel records the task's end), stopped (its worker
        stops: the task is not over), or a failure that ends the task."""
        if _core_outcome.is_cancellation(exc):  # its task cancelled, or its worker stopping
            self._end(_core_outcome.STOPPED if _stop.stopping() else _core_outcome.CANCELLED, None)
        else:
            self._end(_outcome.leg_raised(exc), exc)

    def _stopped(self) -> None:
        """The worker stops with this leg running (SIGTERM, its exit): the leg ends `stopped` and is
        exported with the stop's flush. The task is not over: pydocket delivers the job again."""
        self._finish(_core_outcome.STOPPED, None)

    def _end(self, cls: Classification, exc: BaseException | None) -> None:
        if _stop.release(self):  # else the stop took it first, and ended it
            self._finish(cls, exc)

    def _finish(self, cls: Classification, exc: BaseException | None) -> None:
        if self._done:
            return
        self._done = True
        span = self.span
        telemetry = self.run.telemetry
        try:
            if span.is_recording():
                _core_outcome.write(
                    span,
                    cls,
                    {},
                    exc,
                    telemetry.privacy.description(exc) if exc is not None else cls.error_type,
                    telemetry.privacy,
                )
            self.run.leg_took(time.perf_counter() - self._started, cls)
            ended = _outcome.of_leg(cls)
            if ended is not None:
                self.run.ended(ended, span)
        except Exception as failure:
            report("task leg end", failure)
        finally:
            end_once(span)
