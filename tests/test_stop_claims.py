"""The stop's claims on a call, in process: whichever of the call and the stop ends it first records it, once.

`_core/stop.py` ends the calls still running as `stopped` when the process will not wait for
them; a call that then finishes after all must not be recorded a second time, a call that
finished first is not the stop's, and a server's own end (its lifespan's) marks the stop only
while it lasts.
"""

from __future__ import annotations

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from opentelemetry.trace import SpanKind, StatusCode
from transports import server_spans

from mcpobs import semconv as S
from mcpobs._core import stop

pytestmark = pytest.mark.anyio

TOOL = {S.MCP_METHOD_NAME: "tools/call"}


@pytest.fixture(autouse=True)
def no_stop_left():
    stop.reset()
    yield
    stop.reset()
    stop.use(list, 3.0, None)  # no kill known: what the next instrument() sets again


def shop(release: anyio.Event, entered: anyio.Event) -> MCPServer:
    server = MCPServer("shop")

    @server.tool()
    async def slow() -> str:
        entered.set()
        await release.wait()
        return "done"

    return server


async def test_a_call_the_stop_ended_is_recorded_once_as_stopped_even_if_it_finishes(mcpobs_telemetry):
    release, entered = anyio.Event(), anyio.Event()
    async with Client(shop(release, entered)) as client, anyio.create_task_group() as group:
        group.start_soon(client.call_tool, "slow", {})
        await entered.wait()
        assert stop.end_running() == 2  # the process will not wait: the stop records it (server and client) now
        release.set()  # and then it finishes after all
    (span,) = server_spans(mcpobs_telemetry, "tools/call slow")
    assert span.attributes[S.OUTCOME] == S.Outcome.STOPPED
    assert span.attributes[S.ERROR_TYPE] == S.SERVER_STOPPED
    assert span.status.status_code is StatusCode.ERROR
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, {**TOOL, S.OUTCOME: S.Outcome.STOPPED.value}) == 1
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, {**TOOL, S.OUTCOME: S.Outcome.OK.value}) == 0
    assert mcpobs_telemetry.total(S.SERVER_OPERATION_DURATION.name, TOOL) == 0  # no latency sample
    (client,) = [s for s in mcpobs_telemetry.spans() if s.kind is SpanKind.CLIENT and s.name.startswith("tools/call")]
    assert (client.attributes[S.OUTCOME], client.attributes[S.ERROR_TYPE]) == (S.Outcome.STOPPED, S.HOST_STOPPED)
    assert mcpobs_telemetry.total(S.CLIENT_REQUESTS.name, {**TOOL, S.OUTCOME: S.Outcome.STOPPED.value}) == 1
    assert mcpobs_telemetry.total(S.CLIENT_REQUESTS.name, {**TOOL, S.OUTCOME: S.Outcome.OK.value}) == 0


async def test_a_call_that_finished_is_not_the_stops(mcpobs_telemetry):
    release, entered = anyio.Event(), anyio.Event()
    release.set()
    async with Client(shop(release, entered)) as client:
        await client.call_tool("slow", {})
    assert stop.end_running() == 0
    (span,) = server_spans(mcpobs_telemetry, "tools/call slow")
    assert span.attributes[S.OUTCOME] == S.Outcome.OK


def test_a_servers_own_end_marks_the_stop_only_while_it_lasts():
    marked = stop.mark()
    assert marked and stop.stopping()
    assert not stop.mark()  # one mark at a time
    stop.unmark(marked)
    assert not stop.stopping()  # the process may serve again


def test_a_stop_of_the_whole_process_begins_once_and_stays(mcpobs_telemetry):
    stop.begin()
    first = stop._thread
    stop.begin()
    assert stop._thread is first is not None
    stop.unmark(True)  # a lifespan ending inside it takes nothing back
    assert stop.stopping()
    stop.finish(5)
    assert not first.is_alive()


@pytest.mark.parametrize(("grace", "outcome"), [(None, S.Outcome.OK), (5.0, S.Outcome.OK), (0.1, S.Outcome.STOPPED)])
async def test_a_call_that_answers_before_a_known_kill_is_ok_else_stopped(mcpobs_telemetry, grace, outcome):
    """`grace`: the seconds from the stop to the orchestrator's kill (None: no kill known, no call ended early)."""
    release, entered = anyio.Event(), anyio.Event()
    stop.use(list, 3.0, grace)  # nothing to export: the in-memory exporter has every ended span
    async with Client(shop(release, entered)) as client, anyio.create_task_group() as group:
        group.start_soon(client.call_tool, "slow", {})
        await entered.wait()
        stop.begin()
        await anyio.sleep(0.5)
        release.set()
    stop.finish(5)
    (span,) = server_spans(mcpobs_telemetry, "tools/call slow")
    assert span.attributes[S.OUTCOME] == outcome


@pytest.mark.parametrize(
    ("argv", "env", "seconds"),
    [
        (["granian", "app:app", "--workers-kill-timeout", "2"], {}, 2.0),
        (["granian", "app:app", "--workers-kill-timeout=1m30s"], {}, 90.0),
        (["granian", "app:app"], {"GRANIAN_WORKERS_KILL_TIMEOUT": "30s"}, 30.0),
        (["granian", "app:app"], {}, None),
    ],
)
def test_granians_kill_timeout_is_read_as_granian_reads_it(argv, env, seconds):
    from mcpobs._core.stop_points import granian_kill_timeout

    assert granian_kill_timeout(argv, env) == seconds


def test_no_kill_known_ends_nothing_early_and_the_nearest_kill_wins():
    stop.use(list, 3.0, None)
    assert stop.kill_deadline() is None
    stop.use(list, 3.0, 30.0)
    stop.killed_after(2)
    assert stop.kill_deadline() == 2.0
    assert stop.kill_margin(2.0) == 0.5 and stop.kill_margin(30.0) == 1.0
    stop.use(list, 3.0, None)


def test_the_old_stop_grace_variable_is_not_read_and_says_what_to_set(caplog):
    from mcpobs._core.autoconfig import termination_grace_from

    assert termination_grace_from({"OTEL_PYTHON_MCP_STOP_GRACE": "18"}) is None
    assert "OTEL_PYTHON_MCP_TERMINATION_GRACE" in caplog.text
    assert termination_grace_from({"OTEL_PYTHON_MCP_TERMINATION_GRACE": "30"}) == 30.0


def test_a_call_recorded_while_the_late_flush_exports_is_exported_too():
    """`flush_soon` after a stop's flushes: a call counted while that late export runs gets one more
    export (before: the thread was busy, so nothing exported the count again, and the process could
    exit without it; a span queued meanwhile the batch processor exports in the same flush)."""
    import threading
    import time

    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import (
        MetricExporter,
        MetricExportResult,
        PeriodicExportingMetricReader,
    )

    exporting = threading.Event()
    exported: list[float] = []

    class Slow(MetricExporter):
        def __init__(self) -> None:
            super().__init__(preferred_temporality={})

        def export(self, metrics_data, timeout_millis: float = 10_000, **kwargs):  # a loaded collector
            exporting.set()
            first = not exported
            if first:
                time.sleep(0.5)
            for resource in metrics_data.resource_metrics:
                for scope in resource.scope_metrics:
                    for metric in scope.metrics:
                        exported.extend(p.value for p in metric.data.data_points)
            return MetricExportResult.SUCCESS

        def force_flush(self, timeout_millis: float = 10_000) -> bool:
            return True

        def shutdown(self, timeout_millis: float = 30_000, **kwargs) -> None:
            pass

    reader = PeriodicExportingMetricReader(Slow(), export_interval_millis=600_000)
    provider = MeterProvider(metric_readers=[reader])
    stop.use(lambda: [provider], 3.0, None)
    counter = provider.get_meter("test").create_counter("calls")
    try:
        counter.add(1)  # a call the stop cut, recorded after the stop's own flushes
        stop.flush_soon()
        assert exporting.wait(5)
        time.sleep(0.1)
        counter.add(1)  # another, recorded while that export runs
        stop.flush_soon()
        deadline = time.monotonic() + 5
        while (not exported or exported[-1] != 2) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert exported and exported[-1] == 2, exported
    finally:
        provider.shutdown()
