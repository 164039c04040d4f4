"""The two processes of the routing test: an instrumented server and an instrumented client.

Run as ``routing_workload.py serve PORT SPANS.jsonl`` (the shop over Streamable HTTP on loopback)
and ``routing_workload.py call URL SPANS.jsonl CALLS.json`` (the client's day), each with only
standard OTEL_* variables set, so each process exports its own half of every trace: the
client's CLIENT span and the server's SERVER span meet only where the collectors bring them.

Each process writes every span it ends to SPANS.jsonl (one line per span, written as it ends),
what was sent, for the test to look for in the backends. The day, per CALLS.json
(``{"kind": count}``), shuffled and run by a few concurrent tasks:

- ``ok``: `get_order_status` answered;
- ``tool_error``, ``server_error``: failures the server flags (and the client too);
- ``output_validation``: the server answers `invoice_total` fine by its own lights, but the result
  breaks the output schema the tool lists, so only the client flags it (the SDK's validation);
- ``cancelled``: the client gives up on `wait_for_stock` after 1 s (time for the request to reach
  the server on a loaded machine, so that both processes have a span of the call).
"""

from __future__ import annotations

import json
import random
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp_types import CallToolResult, TextContent
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor

import mcpobs
from mcpobs import semconv as S

CONCURRENCY = 8
INVOICE_SCHEMA = {"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]}
CALL = {
    "ok": ("get_order_status", {"order_id": "O-1873"}),
    "tool_error": ("get_order_status", {"order_id": "O-9999"}),
    "server_error": ("quote_refund", {"order_id": "O-1873", "amount_cents": -1}),
    "output_validation": ("invoice_total", {"order_id": "O-1873"}),
    "cancelled": ("wait_for_stock", {"sku": "KG-1031"}),
}
"""The tool and arguments of each kind of call."""


class Written(SpanProcessor):
    """Appends every span this process ends to a JSON-lines file, one line per span, as it ends."""

    def __init__(self, path: Path) -> None:
        self._file = path.open("a", buffering=1)
        self._lock = threading.Lock()

    def on_end(self, span: ReadableSpan) -> None:
        attributes = span.attributes or {}
        line = json.dumps(
            {
                "trace_id": f"{span.context.trace_id:032x}",
                "span_id": f"{span.context.span_id:016x}",
                "name": span.name,
                "kind": span.kind.name,
                "outcome": attributes.get(S.OUTCOME),
                "error_type": attributes.get(S.ERROR_TYPE),
                "status": span.status.status_code.name,
                "schema_stale": attributes.get(S.TOOL_SCHEMA_STALE),
                "tool": attributes.get(S.GEN_AI_TOOL_NAME),
                "start": span.start_time,
                "end": span.end_time,
            }
        )
        with self._lock:
            self._file.write(line + "\n")


def record_spans(path: Path) -> None:
    mcpobs.instrument()
    trace.get_tracer_provider().add_span_processor(Written(path))  # type: ignore[attr-defined]


def serve(port: int, spans: Path) -> None:
    import uvicorn
    from shop import create_server

    record_spans(spans)
    server = create_server("routing-shop")

    def invoice_total(order_id: str) -> CallToolResult:
        """The order's total in cents (as an integer, says the schema; the handler disagrees)."""
        return CallToolResult(content=[TextContent(type="text", text="twelve")], structured_content={"total": "twelve"})

    server.add_tool(invoice_total)
    # A schema published by hand, without a model, is listed but not checked by the server.
    server._tool_manager.get_tool("invoice_total").fn_metadata.output_schema = INVOICE_SCHEMA  # type: ignore[union-attr]
    uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=port, log_level="warning")


async def one(client: Client, kind: str) -> None:
    tool, arguments = CALL[kind]
    if kind == "cancelled":
        with anyio.move_on_after(1.0):
            await client.call_tool(tool, arguments)
        return
    try:
        result = await client.call_tool(tool, arguments)
    except RuntimeError:  # the SDK's output validation
        assert kind == "output_validation", kind
        return
    assert result.is_error == (kind != "ok"), (kind, result)


async def call(url: str, spans: Path, calls: dict[str, int]) -> None:
    record_spans(spans)
    day = [kind for kind, n in calls.items() for _ in range(n)]
    random.Random(32).shuffle(day)
    queue = iter(day)

    async def worker(client: Client) -> None:
        for kind in queue:
            await one(client, kind)

    async with Client(url) as client, anyio.create_task_group() as tasks:
        for _ in range(CONCURRENCY):
            tasks.start_soon(worker, client)
    trace.get_tracer_provider().force_flush()  # type: ignore[attr-defined]


def main(argv: list[str]) -> Any:
    if argv[0] == "serve":
        return serve(int(argv[1]), Path(argv[2]))
    calls: dict[str, int] = json.loads(Path(argv[3]).read_text())
    return anyio.run(call, argv[1], Path(argv[2]), calls)


if __name__ == "__main__":
    main(sys.argv[1:])
