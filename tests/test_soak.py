"""Soak: thousands of calls over hundreds of sessions, memory levels off and every call is counted.

Rounds of sessions (in memory, both protocol paths) make ok calls, tool errors, calls to
unknown tools with ever-new names, hostile strings and prompt reads, through the real SDK
pipeline (a batch span processor to an exporter that only counts, an in-memory metric reader
collected every round). After each round the heap traced by `tracemalloc` is measured; after
the warm-up it must stop growing (bounded caches fill up, weak per-session state goes with its
session), and the counters and the exported spans must match the calls made exactly.
Bounded to about a minute (marker `slow`).
"""

from __future__ import annotations

import gc
import logging
import time
import tracemalloc
from collections.abc import Sequence
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

import mcpobs
from mcpobs import semconv as S

pytestmark = pytest.mark.slow

ROUNDS = 12
SESSIONS = 8
CALLS = 25  # per session
BUDGET = 45.0  # seconds: no new round past it once the minimum is done (a slow, shared machine)
WARM_UP = 3  # rounds before the heap is expected to level off
GROWTH_PER_CALL = 64  # bytes: what the heap may still grow per call after the warm-up (allocator noise)


class CountingExporter(SpanExporter):
    def __init__(self) -> None:
        self.spans = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans += len(spans)
        return SpanExportResult.SUCCESS


def total(reader: InMemoryMetricReader, metric: str, wanted: dict[str, Any]) -> float:
    data = reader.get_metrics_data()
    found = 0.0
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for m in scope.metrics:
                if m.name == metric:
                    for point in m.data.data_points:
                        if all(point.attributes.get(k) == v for k, v in wanted.items()):
                            found += getattr(point, "count", None) or getattr(point, "value", 0)
    return found


def shop() -> MCPServer:
    server = MCPServer("soak")

    @server.tool()
    def get_order_status(order_id: str) -> str:
        if order_id.startswith("missing"):
            raise LookupError(f"no order {order_id}")
        return "shipped"

    @server.prompt()
    def summary(order_id: str) -> str:
        return f"summarize {order_id}"

    return server


async def session(server: MCPServer, mode: str, serial: int) -> int:
    """One session's calls; returns how many tools/call requests it sent."""
    sent = 0
    async with Client(server, mode=mode) as client:
        await client.list_tools()
        await client.list_prompts()
        for i in range(CALLS):
            kind = i % 5
            if kind == 0:
                await client.call_tool("get_order_status", {"order_id": f"O-{i}"})
            elif kind == 1:
                await client.call_tool("get_order_status", {"order_id": f"missing-{serial}-\ud800-{i}"})
            elif kind == 2:
                await client.call_tool(f"invented-{serial}-{i}", {})  # a new unknown name every time
            elif kind == 3:
                await client.call_tool("get_order_status", {"order_id": "x" * 5_000})
            else:
                await client.get_prompt("summary", {"order_id": f"O-{i}"})
                continue
            sent += 1
    return sent


def test_memory_levels_off_and_every_call_is_counted():
    exporter = CountingExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(exporter, max_queue_size=20_000))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    mcpobs.uninstrument()
    mcpobs.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    server = shop()
    heap: list[int] = []
    calls_after_warm_up = 0
    sent = 0
    sessions = 0
    started = time.monotonic()
    # The SDK logs each failed call with its traceback; a log handler that keeps records
    # (pytest's) would be the growth measured. mcpobs's own logging is not what is soaked here.
    logging.disable(logging.CRITICAL)
    tracemalloc.start(1)
    try:
        for round_ in range(ROUNDS):
            if round_ >= WARM_UP + 3 and time.monotonic() - started > BUDGET:
                break

            async def one_round(offset: int) -> int:
                made = 0
                for n in range(SESSIONS):
                    made += await session(server, "auto" if n % 2 else "legacy", offset + n)
                return made

            made = anyio.run(one_round, round_ * SESSIONS)
            sent += made
            sessions += SESSIONS
            if round_ >= WARM_UP:
                calls_after_warm_up += made
            reader.collect()
            assert tracer_provider.force_flush(30_000)
            gc.collect()
            heap.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
        logging.disable(logging.NOTSET)
        mcpobs.uninstrument()
        tracer_provider.shutdown()
    took = time.monotonic() - started
    rounds = len(heap)
    growth = heap[-1] - heap[WARM_UP - 1]
    per_call = growth / max(calls_after_warm_up, 1)
    summary = (
        f"{rounds} rounds, {sessions} sessions, {sent} tool calls in {took:.0f} s; heap by round (KiB): "
        f"{[h // 1024 for h in heap]}; after warm-up {growth / 1024:.0f} KiB over {calls_after_warm_up} calls "
        f"({per_call:.1f} B/call)"
    )
    print(summary)
    assert rounds >= WARM_UP + 3, summary
    assert per_call < GROWTH_PER_CALL, summary
    tool_calls = {S.MCP_METHOD_NAME: "tools/call"}
    assert total(reader, S.SERVER_REQUESTS.name, tool_calls) == sent, summary
    assert total(reader, S.CLIENT_REQUESTS.name, tool_calls) == sent, summary
    prompts = {S.MCP_METHOD_NAME: "prompts/get"}
    assert total(reader, S.SERVER_REQUESTS.name, prompts) == sessions * (CALLS // 5), summary
    # a client and a server span per tools/call, none dropped by the batch processor
    assert exporter.spans >= 2 * sent
