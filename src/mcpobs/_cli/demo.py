"""`python -m mcpobs demo`: a small shop server, instrumented, driven through every outcome but `stopped` (which takes the server stopping mid-call).

With no backend configured the traces are printed as trees and the metrics as a summary.
With an OTLP endpoint set (``OTEL_EXPORTER_OTLP_ENDPOINT`` or a per-signal one) each signal
goes there if its endpoint takes it, and the demo says, signal by signal, where it went or
why it did not (`destinations`); when no endpoint takes anything, it prints the trees.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, TextIO

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit, Resolve
from pydantic import BaseModel

from mcpobs import semconv as S
from mcpobs._cli import destinations, render
from mcpobs._cli.serving import serve
from mcpobs._cli.stores.jaeger import traces_url

ORDERS = {"O-1873": "delivered", "O-2001": "shipped"}
_PROMETHEUS_OTLP = "/api/v1/otlp/v1/metrics"
"""The path of Prometheus's OTLP receiver: a metrics URL ending so is a Prometheus one can query."""


class Confirm(BaseModel):
    ok: bool


async def ask_to_confirm() -> Elicit[Confirm]:
    return Elicit("Issue this refund?", Confirm)


def build_shop() -> MCPServer:
    """The shop's server: orders, refunds, stock, a slow export and a confirmation."""
    shop = MCPServer("shop", version="1.0.0")

    @shop.tool()
    def get_order_status(order_id: str) -> str:
        """One order's status."""
        if order_id not in ORDERS:
            raise ToolError(f"Unknown order {order_id}: call find_orders first.")
        return ORDERS[order_id]

    @shop.tool()
    def check_stock(sku: str) -> int:
        """Units on hand; the warehouse API has a bug for one SKU."""
        if sku == "KG-0000":
            raise KeyError("warehouse index")
        return 12

    @shop.tool()
    async def issue_refund(order_id: str, confirm: Annotated[Confirm, Resolve(ask_to_confirm)]) -> str:
        """Refund an order after the user confirms."""
        return f"refunded {order_id}" if confirm.ok else "refund cancelled by the user"

    @shop.tool()
    async def slow_export(ctx: Context, rows: int = 5) -> str:
        """A long export that reports progress."""
        for i in range(rows):
            await anyio.sleep(0.02)
            await ctx.report_progress(i + 1, rows, f"exported {i + 1}/{rows}")
        return f"exported {rows} rows"

    @shop.tool()
    async def reindex_catalog() -> str:
        """Slow enough that an impatient client gives up."""
        await anyio.sleep(5)
        return "reindexed"

    return shop


async def _drive(url: str, shop: Any, out: TextIO) -> None:
    import mcp_types as types
    from mcp import Client
    from mcp.server.subscriptions import ToolsListChanged

    async def confirm(context: Any, params: Any) -> Any:
        return types.ElicitResult(action="accept", content={"ok": True})

    async with Client(url, elicitation_callback=confirm) as client:
        steps: list[tuple[str, Any]] = [
            ("ok", client.call_tool("get_order_status", {"order_id": "O-1873"})),
            ("tool error", client.call_tool("get_order_status", {"order_id": "O-7144"})),
            ("crash", client.call_tool("check_stock", {"sku": "KG-0000"})),
            ("unknown tool", client.call_tool("shop__get_order_status", {})),
            ("bad arguments", client.call_tool("slow_export", {"rows": "many"})),
            ("pending input", client.call_tool("issue_refund", {"order_id": "O-2001"})),
            ("progress", client.call_tool("slow_export", {"rows": 5})),
        ]
        for label, step in steps:
            result = await step
            out.write(f"  {label:14} -> {'error' if result.is_error else 'result'}\n")
        with anyio.move_on_after(0.3):
            await client.call_tool("reindex_catalog", {})
        out.write(f"  {'cancelled':14} -> the client gave up after 0.3 s\n")
        async with client.listen(tools_list_changed=True) as events:
            await shop._subscriptions.publish(ToolsListChanged())
            with anyio.move_on_after(2):
                event = await anext(events)
                out.write(f"  {'subscription':14} -> {type(event).__name__}\n")


def _spans(spans: Sequence[Any]) -> list[render.Span]:
    """The SDK's finished spans as the renderer's rows."""
    return [
        render.Span(
            span_id=f"{s.context.span_id:016x}",
            parent_id=f"{s.parent.span_id:016x}" if s.parent else None,
            name=s.name,
            kind=s.kind.name,
            start_ns=s.start_time,
            duration_ns=s.end_time - s.start_time,
            attributes=dict(s.attributes or {}),
        )
        for s in spans
    ]


def _metric_rows(reader: Any) -> list[render.MetricRow]:
    """The server's request metrics from an in-memory reader, as the renderer's rows."""
    rows: list[render.MetricRow] = []
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name not in (S.SERVER_REQUESTS.name, S.SERVER_OPERATION_DURATION.name):
                    continue
                for p in metric.data.data_points:
                    a = p.attributes
                    label = (
                        metric.name,
                        str(a.get(S.MCP_METHOD_NAME)),
                        str(a.get(S.GEN_AI_TOOL_NAME, "")),
                        str(a.get(S.OUTCOME, "")),
                        str(a.get(S.FAILURE_BOUNDARY, "")),
                    )
                    if hasattr(p, "count"):
                        rows.append(render.MetricRow(*label, count=p.count, total=p.sum))
                    else:
                        rows.append(render.MetricRow(*label, value=p.value))
    return rows


def run(out: TextIO) -> int:
    """Run the demo; returns an exit status."""
    import logging

    import mcpobs

    for noisy in ("mcp", "httpx", "httpx2"):  # the SDK and its HTTP client log every call they make
        logging.getLogger(noisy).setLevel(logging.CRITICAL)
    exporting = any(os.environ.get(f"OTEL_EXPORTER_OTLP_{kind}ENDPOINT") for kind in ("", "TRACES_", "METRICS_"))
    captured = None
    sent: dict[destinations.Signal, destinations.Destination] = {}
    if exporting:
        sent = destinations.check(os.environ)  # a refusing endpoint's signal is turned off, not retried
        exporting = any(d.sending for d in sent.values())
    if exporting:
        mcpobs.instrument()
    else:
        from mcpobs.testing import capture

        captured = capture()
    shop = build_shop()
    out.write("Driving the shop through every outcome:\n")
    with serve(shop.streamable_http_app()) as base:
        url = f"{base}/mcp"
        anyio.run(_drive, url, shop, out)
    if captured is None:
        _flush()
        _report(sent, out)
        return 0
    if sent:
        out.write("\nNothing was exported:\n" + "".join(f"  {d.line()}\n" for d in sent.values()))
        out.write("so here is what was recorded, in memory.\n")
    out.write(f"\nTraces (name, kind, duration, {S.OUTCOME}, key attributes):\n")
    spans = captured.spans()
    by_trace: dict[int, list[Any]] = defaultdict(list)
    for s in spans:
        if s.context is not None:
            by_trace[s.context.trace_id].append(s)
    for trace_spans in sorted(by_trace.values(), key=lambda t: min(s.start_time for s in t)):
        out.write("trace\n")
        render.tree(_spans(trace_spans), out)
    out.write("\nMetrics:\n")
    render.table(_metric_rows(captured.reader), out)
    mcpobs.uninstrument()
    return 0


def _flush() -> None:
    from opentelemetry import metrics, trace

    for provider in (trace.get_tracer_provider(), metrics.get_meter_provider()):
        flush = getattr(provider, "force_flush", None)
        if flush:
            flush()


def _service_name() -> str | None:
    """The service.name the spans carry (OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES); None if the SDK's default."""
    from opentelemetry import trace

    resource = getattr(trace.get_tracer_provider(), "resource", None)
    name = resource.attributes.get("service.name") if resource is not None else None
    return name if isinstance(name, str) and not name.startswith("unknown_service") else None


def _report(sent: Mapping[destinations.Signal, destinations.Destination], out: TextIO) -> None:
    """What happened to each signal, and where to look for what was sent."""
    out.write("\n" + "".join(f"{d.line()}\n" for d in sent.values()))
    traces, metrics = sent.get("traces"), sent.get("metrics")
    if traces is not None and traces.state == "sent":
        service = _service_name()
        if service is None:
            out.write(
                "The spans carry the SDK's default service name (unknown_service:...): set OTEL_SERVICE_NAME "
                "to find them by a name of yours.\n"
            )
        else:
            out.write(
                f"Its traces in Jaeger's query API (the UI at http://127.0.0.1:16686 under docker compose):\n"
                f"  {traces_url(service)}\n"
            )
    if metrics is not None and metrics.state == "sent":
        query = f"sum by ({S.prometheus_label(S.OUTCOME)}) ({S.prometheus_name(S.SERVER_REQUESTS)})"
        prometheus = metrics.url.removesuffix(_PROMETHEUS_OTLP)
        if prometheus != metrics.url:
            out.write(f"Its metrics in Prometheus at {prometheus}: try {query}.\n")
        else:
            out.write(f"Its metrics are {S.SERVER_REQUESTS.name} and {S.SERVER_OPERATION_DURATION.name} there.\n")
