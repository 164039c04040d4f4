"""What mcpobs's task telemetry (`mcpobs._tasks`) costs a task, against the same telemetry written by hand.

One task in two places, each beside its baseline in the same run: where it is submitted (the
task id hashed, the `create` PRODUCER span made current around the enqueue, the task counted in
flight) and the leg that finishes it in a worker (the `process` CONSUMER span parented on and
linked to the job's context, current while the tool runs; its outcome; the queue wait, the leg's
duration, the task's duration and in-flight count). The baseline writes the same spans, attributes
and metric points with the OpenTelemetry API directly, as someone would by hand: what mcpobs adds
over that is its own bookkeeping (the `TaskRun` and `Leg` objects, the bounded labels, the stop
registry a stopping worker ends legs from). Neither includes pydocket or the tool itself.

    python benchmarks/task_telemetry.py --instructions   # instructions per task, each under callgrind
    python benchmarks/task_telemetry.py                  # CPU µs per task

Printed as a Markdown table: instructions (or µs) per task, and the ratio to the baseline.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from typing import Any

from harness import callgrind
from harness.window import Window

N = 2000
TASK_ID = "W-XvIMumJ4h8WnXCIo7Zcb9VpMgYygk1HzFkYS53yHE"


def cases() -> dict[str, tuple[Any, Any]]:
    """name: (by hand, mcpobs), each a no-argument function doing one task's part."""
    from opentelemetry import context, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Link, SpanKind

    from mcpobs import semconv as S
    from mcpobs._core.config import Settings
    from mcpobs._core.telemetry import Telemetry
    from mcpobs._tasks.task import TaskRun

    tracer_provider = TracerProvider()
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    telemetry = Telemetry(Settings(), tracer_provider, meter_provider)
    tracer = tracer_provider.get_tracer("by-hand")
    meter = meter_provider.get_meter("by-hand")
    in_flight = meter.create_up_down_counter(S.TASKS_IN_FLIGHT.name + ".hand")
    queue_wait = meter.create_histogram(S.TASK_QUEUE_WAIT.name + ".hand")
    leg_duration = meter.create_histogram(S.TASK_LEG_DURATION.name + ".hand")
    duration = meter.create_histogram(S.TASK_DURATION.name + ".hand")
    labels = {S.GEN_AI_TOOL_NAME: "slow", S.MESSAGING_SYSTEM: "pydocket"}
    with tracer.start_as_current_span("tools/call slow", kind=SpanKind.SERVER):
        job = context.get_current()  # a job's context: a sampled span's
    created = time.time_ns()

    def hop(operation: str, id_hash: str) -> dict[str, Any]:
        return {
            S.MESSAGING_SYSTEM: "pydocket",
            S.MESSAGING_OPERATION_TYPE: operation,
            S.MESSAGING_OPERATION_NAME: operation,
            S.MESSAGING_DESTINATION_NAME: "slow",
            S.GEN_AI_TOOL_NAME: "slow",
            S.TASK_ID_HASH: id_hash,
            S.TASK_LEG: 1,
        }

    def id_hash() -> str:
        return hashlib.sha256(S.TASK_ID_HASH.encode() + b"\x00" + TASK_ID.encode()).hexdigest()[:32]

    def submit_by_hand() -> None:
        span = tracer.start_span("create slow", kind=SpanKind.PRODUCER, attributes=hop("create", id_hash()))
        token = context.attach(trace.set_span_in_context(span))
        context.detach(token)  # (the enqueue runs here)
        span.end()
        in_flight.add(1, labels)

    def submit() -> None:
        run = TaskRun(telemetry, "slow", "pydocket", TASK_ID)
        with run.creating():
            pass  # (the enqueue runs here)
        run.submitted()

    def leg_by_hand() -> None:
        started = time.time_ns()
        clock = time.perf_counter()
        parent = trace.get_current_span(job).get_span_context()
        span = tracer.start_span(
            "process slow", job, SpanKind.CONSUMER, hop("process", id_hash()), [Link(parent)], start_time=started
        )
        queue_wait.record((started - created) / 1e9, labels)
        token = context.attach(trace.set_span_in_context(span))
        context.detach(token)  # (the tool runs here)
        span.set_attributes({S.OUTCOME: "ok", S.TASK_OUTCOME: "ok", S.TASK_ID_HASH: id_hash()})
        leg_duration.record(time.perf_counter() - clock, {**labels, S.OUTCOME: "ok"})
        in_flight.add(-1, labels)
        duration.record((time.time_ns() - created) / 1e9, {**labels, S.TASK_OUTCOME: "ok"})
        span.end()

    def leg() -> None:
        run = TaskRun(telemetry, "slow", "pydocket", TASK_ID, created_ns=created)
        with run.leg(1, job) as running:
            pass  # (the tool runs here)
        running.stop()

    return {
        "submission: create span, id hashed, in flight": (submit_by_hand, submit),
        "the leg that ends it: process span, outcome, four metrics": (leg_by_hand, leg),
    }


def measure(name: str, which: int) -> float:
    """Instructions per task under callgrind (this process runs under it), else CPU µs."""
    run = cases()[name][which]
    for _ in range(50):
        run()
    with Window(callgrind.client(), settle=False) as window:
        for _ in range(N):
            run()
    return window.cpu / N * 1e6


def _under_callgrind(name: str, which: int) -> float:
    command = [sys.executable, __file__, "--one", name, str(which)]
    _, total = callgrind.counted_once(command, dict(os.environ), f"{name} ({which})")
    return total / N


def main() -> None:
    if sys.argv[1:2] == ["--one"]:
        measure(sys.argv[2], int(sys.argv[3]))
        return
    counted = "--instructions" in sys.argv
    unit = "instructions" if counted else "CPU µs"
    print(f"| a task's part | by hand ({unit}) | mcpobs ({unit}) | ratio |")
    print("|---|---:|---:|---:|")
    for name in cases():
        by_hand, ours = (_under_callgrind(name, i) if counted else measure(name, i) for i in (0, 1))
        digits = 0 if counted else 2
        print(f"| {name} | {by_hand:,.{digits}f} | {ours:,.{digits}f} | {ours / by_hand:.2f} |")


if __name__ == "__main__":
    main()
