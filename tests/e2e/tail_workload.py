"""A mixed day for the tail-sampling test: mostly ok calls, some of every failure, a few slow ones.

Run as ``tail_workload.py SENT.json`` with only standard OTEL_* variables set: `mcpobs.instrument()`
configures the production setup the docs recommend for tail sampling (every span recorded by
the default parent-based always-on sampler, exported in batches over OTLP; metrics to
Prometheus). The shop is served over Streamable HTTP on loopback and called by an instrumented
client in this same process, so each call is one trace of a CLIENT and a SERVER span.

A span processor added beside the exporter writes every span this process ended to SENT.json:
what was sent, for the test to look for in Jaeger.
"""

from __future__ import annotations

import json
import sys
import threading
from contextlib import suppress
from pathlib import Path

import anyio
from mcp import Client
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from shop import create_server
from transports import serve_http

import mcpobs
from mcpobs import semconv as S

mcpobs.instrument()

SENT = {"ok": 400, "tool_error": 10, "server_error": 10, "client_error": 10, "cancelled": 10, "slow": 4}
"""Calls per kind; `slow` is an ok call that takes SLOW_SECONDS (the collector keeps calls over 1 s)."""
SLOW_SECONDS = 1.5
CONCURRENCY = 8


class Sent(SpanProcessor):
    """Every span this process ends, as the test needs it (ids, kind, outcome, tool, times)."""

    def __init__(self) -> None:
        self.spans: list[dict[str, object]] = []
        self._lock = threading.Lock()

    def on_end(self, span: ReadableSpan) -> None:
        context = span.context
        attributes = span.attributes or {}
        with self._lock:
            self.spans.append(
                {
                    "trace_id": f"{context.trace_id:032x}",
                    "span_id": f"{context.span_id:016x}",
                    "name": span.name,
                    "kind": span.kind.name,
                    "outcome": attributes.get(S.OUTCOME),
                    "tool": attributes.get(S.GEN_AI_TOOL_NAME),
                    "start": span.start_time,
                    "end": span.end_time,
                }
            )

    def tool_calls_served(self) -> int:
        with self._lock:
            return sum(s["kind"] == "SERVER" and str(s["name"]).startswith("tools/call") for s in self.spans)


sent = Sent()
trace.get_tracer_provider().add_span_processor(sent)  # type: ignore[attr-defined]
server = create_server("tail-shop")


@server.tool()
async def slow_lookup(order_id: str) -> str:
    """An ok call slow enough for the collector's latency policy."""
    await anyio.sleep(SLOW_SECONDS)
    return f"{order_id}: found in the archive"


async def oks(client: Client, n: int) -> None:
    for _ in range(n):
        assert not (await client.call_tool("get_order_status", {"order_id": "O-1873"})).is_error


async def failures(client: Client) -> None:
    for _ in range(SENT["tool_error"]):
        assert (await client.call_tool("get_order_status", {"order_id": "O-9999"})).is_error
    for _ in range(SENT["server_error"]):
        assert (await client.call_tool("quote_refund", {"order_id": "O-1873", "amount_cents": -1})).is_error
    for i in range(SENT["client_error"]):  # half an unknown tool, half bad arguments
        if i % 2:
            await client.call_tool("billing__create_invoice", {})
        else:
            await client.call_tool("quote_refund", {"order_id": "O-1873", "amount_cents": "lots"})
    for _ in range(SENT["cancelled"]):
        with anyio.move_on_after(0.3):
            await client.call_tool("wait_for_stock", {"sku": "KG-1031"})


async def main(out: Path) -> None:
    calls = sum(SENT.values())
    with serve_http(server.streamable_http_app()) as base_url:
        async with Client(base_url + "/mcp") as client, anyio.create_task_group() as tasks:
            per_task = SENT["ok"] // CONCURRENCY
            for _ in range(CONCURRENCY):
                tasks.start_soon(oks, client, per_task)
            for _ in range(SENT["slow"]):
                tasks.start_soon(client.call_tool, "slow_lookup", {"order_id": "O-0001"})
            tasks.start_soon(failures, client)
        with anyio.fail_after(30):  # the cancelled calls' server spans end when the server notices
            while sent.tool_calls_served() < calls:
                await anyio.sleep(0.1)
    with suppress(Exception):
        trace.get_tracer_provider().force_flush()  # type: ignore[attr-defined]
    out.write_text(json.dumps({"sent": SENT, "slow_seconds": SLOW_SECONDS, "spans": sent.spans}))


anyio.run(main, Path(sys.argv[1]))
