"""A telemetry pipeline that fails never changes what the host gets, and never prints to stdout.

The same client's day runs without mcpobs and with it, against exporters that raise (behind
the batch processors `instrument()` configures from OTEL_* variables, and behind simple
ones), and against an OTLP endpoint where nothing listens. Every result must be the same.
(A span processor that raises is in test_instrumentation.py; a Jaeger killed in the middle
of a run is in e2e/test_backend_restart.py.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    MetricExporter,
    MetricExportResult,
    MetricsData,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter, SpanExportResult
from processes import ONE_LINE_LOGS, free_port
from shop import create_server
from transports import TRANSPORTS, serve_http

import mcpobs

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent


# -- the client's day: every kind of result, comparable with and without mcpobs ----------------


async def _approve(ctx: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"approved": True})


async def _roots(ctx: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///srv/shop")])


async def a_clients_day(transport: str) -> list[Any]:
    """Every outcome the shop has, on one transport; what the client got, as plain JSON values."""
    server = create_server()
    heard: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append(progress)

    with ExitStack() as stack:
        target: Any = server
        if transport == "http":
            target = stack.enter_context(serve_http(server.streamable_http_app())) + "/mcp"
        mode = "legacy" if transport == "legacy" else "auto"
        async with Client(target, mode=mode, elicitation_callback=_approve, list_roots_callback=_roots) as client:
            got: list[Any] = [[t.name for t in (await client.list_tools()).tools]]
            for name, arguments in [
                ("get_order_status", {"order_id": "O-1873"}),  # ok
                ("get_order_status", {"order_id": "O-0"}),  # tool error
                ("quote_refund", {"order_id": "O-1873", "amount_cents": -1}),  # server error
                ("quote_refund", {"order_id": "O-1873", "amount_cents": "lots"}),  # bad arguments
                ("no_such_tool", {}),  # unknown tool
                ("approve_refund", {"order_id": "O-1873"}),  # asks the client twice in one round
                ("confirm_cancel", {"order_id": "O-2001"}),  # three rounds
            ]:
                try:
                    result = await client.call_tool(name, arguments)
                except MCPError as exc:  # legacy mode has no multi-round-trip: a JSON-RPC error
                    got.append(["error", exc.error.code, exc.error.message])
                    continue
                got.append([result.is_error, [c.model_dump() for c in result.content], result.structured_content])
            result = await client.call_tool("slow_export", {"rows": 5}, progress_callback=on_progress)
            got.append([result.content[0].model_dump(), heard])
            try:
                await client.call_tool("wait_for_stock", {"sku": "KG-1031"}, read_timeout_seconds=0.2)
            except MCPError as exc:
                got.append(["gave up", exc.error.code])
            prompt = await client.get_prompt("refund_reply", {"customer": "Ada"})
            got.append([m.model_dump() for m in prompt.messages])
            resource = await client.read_resource("shop://catalog")
            got.append([c.model_dump(mode="json") for c in resource.contents])
    return got


# -- exporters that raise, in process -----------------------------------------------------------


class RaisingSpanExporter(SpanExporter):
    def __init__(self) -> None:
        self.attempts = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.attempts += 1
        raise ConnectionError("span backend down")


class RaisingMetricExporter(MetricExporter):
    def __init__(self) -> None:
        super().__init__(preferred_temporality={}, preferred_aggregation={})
        self.attempts = 0

    def export(self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any) -> MetricExportResult:
        self.attempts += 1
        raise ConnectionError("metric backend down")

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        pass


@pytest.mark.parametrize("processor", ["batch", "simple"])
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_exporters_that_raise_change_no_result_and_print_nothing(transport, processor, capfd):
    expected = await a_clients_day(transport)  # not instrumented
    capfd.readouterr()

    spans, metrics = RaisingSpanExporter(), RaisingMetricExporter()
    tracer_provider = TracerProvider()
    span_processor = BatchSpanProcessor(spans, schedule_delay_millis=20) if processor == "batch" else None
    tracer_provider.add_span_processor(span_processor or SimpleSpanProcessor(spans))
    reader = PeriodicExportingMetricReader(metrics, export_interval_millis=20)
    meter_provider = MeterProvider(metric_readers=[reader])
    mcpobs.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    try:
        got = await a_clients_day(transport)
        tracer_provider.force_flush()
        reader.force_flush()
    finally:
        mcpobs.uninstrument()
        tracer_provider.shutdown()
        meter_provider.shutdown()
    assert got == expected
    assert spans.attempts > 0 and metrics.attempts > 0  # the pipeline really was tried, and failed
    assert capfd.readouterr().out == ""


# -- an OTLP endpoint where nothing listens, configured only by OTEL_* variables ----------------

DAY = """
import json, sys
import anyio
if sys.argv[1] == "instrumented":
    import mcpobs
    mcpobs.instrument()
from test_faults import TRANSPORTS, a_clients_day

async def main():
    for transport in TRANSPORTS:
        print(json.dumps(await a_clients_day(transport)), flush=True)

anyio.run(main)
"""


def run_day(how: str, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", DAY, how],
        env={**clean, "PYTHONPATH": str(HERE), **ONE_LINE_LOGS, **env},
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc, time.monotonic() - started


def test_an_otlp_endpoint_where_nothing_listens_changes_no_result_and_prints_nothing():
    endpoint = f"http://127.0.0.1:{free_port()}"
    nowhere = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_SERVICE_NAME": "shop-nowhere",
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "OTEL_METRIC_EXPORT_INTERVAL": "200",
        # Seconds the SDK's exporters would keep retrying a batch; mcpobs drops batches for an
        # endpoint that refuses connections instead (tests/test_dead_endpoint.py times the exit).
        "OTEL_EXPORTER_OTLP_TIMEOUT": "2",
    }
    bare, bare_seconds = run_day("bare", nowhere)
    instrumented, seconds = run_day("instrumented", nowhere)
    print(f"\nbare {bare_seconds:.1f}s, instrumented against a closed port {seconds:.1f}s")
    assert len(bare.stdout.splitlines()) == len(TRANSPORTS)
    assert instrumented.stdout == bare.stdout  # the same results, and not one byte more on stdout
    # It really tried: mcpobs said once, through logging, that nothing answers at the endpoint.
    said = [line for line in instrumented.stderr.splitlines() if "nothing answers at the OTLP endpoint" in line]
    assert len(said) == 1 and endpoint in said[0], instrumented.stderr[-2000:]
    assert all(json.loads(line) for line in instrumented.stdout.splitlines())
