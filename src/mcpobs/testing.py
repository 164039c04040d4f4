"""In-memory telemetry for testing your own MCP server; importable without pytest.

With pytest, use the ``mcpobs_telemetry`` fixture (the plugin in `mcpobs._pytest_plugin`,
loaded automatically when mcpobs is installed), then build your server inside the test::

    from mcpobs import semconv

    async def test_refund_tool_reports_a_tool_error(mcpobs_telemetry):
        async with Client(create_server()) as client:
            await client.call_tool("quote_refund", {"order_id": "O-1"})
        span = mcpobs_telemetry.server_span("tools/call quote_refund")
        assert span.attributes[semconv.OUTCOME] == semconv.Outcome.TOOL_ERROR

The fixture instruments with in-memory exporters for the test and uninstruments after it.
Servers must be built inside the test (after instrumentation), as in production they are
built after `mcpobs.instrument()`. Without pytest, `capture()` does the same: pair it with
`mcpobs.uninstrument()`.
"""

from __future__ import annotations

from typing import Any, Unpack

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from mcpobs._core.config import Options, signature

__all__ = ["CapturedTelemetry", "capture"]


class CapturedTelemetry:
    """Spans and metrics recorded while instrumented, for assertions."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def spans(self) -> list[ReadableSpan]:
        """Finished spans, in the order they ended."""
        return list(self.exporter.get_finished_spans())

    def spans_named(self, name: str, kind: SpanKind | None = None) -> list[ReadableSpan]:
        """Finished spans with this name, of one kind (SERVER, CLIENT, ...) when given."""
        return [s for s in self.spans() if s.name == name and (kind is None or s.kind is kind)]

    def server_span(self, name: str) -> ReadableSpan:
        """The one SERVER span with this name (client spans share the conventions' names)."""
        return self.span(name, SpanKind.SERVER)

    def client_span(self, name: str) -> ReadableSpan:
        """The one CLIENT span with this name."""
        return self.span(name, SpanKind.CLIENT)

    def span(self, name: str, kind: SpanKind | None = None) -> ReadableSpan:
        """The one finished span with this name (and kind); fails if there are none or several."""
        found = self.spans_named(name, kind)
        assert len(found) == 1, (
            f"expected one span {name!r}, found {len(found)}: {sorted(s.name for s in self.spans())}"
        )
        return found[0]

    def points(self, metric: str) -> list[Any]:
        """Data points of one metric (histogram or sum points), each with `.attributes`."""
        data = self.reader.get_metrics_data()
        found: list[Any] = []
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for m in scope.metrics:
                    if m.name == metric:
                        found.extend(m.data.data_points)
        return found

    def total(self, metric: str, attributes: dict[str, Any] | None = None) -> float:
        """Sum of a counter (or count of a histogram) over points matching these attributes."""
        wanted = attributes or {}
        total = 0.0
        for point in self.points(metric):
            if all(point.attributes.get(k) == v for k, v in wanted.items()):
                total += getattr(point, "count", None) or getattr(point, "value", 0)
        return total

    def clear(self) -> None:
        self.exporter.clear()


def capture(**options: Unpack[Options]) -> CapturedTelemetry:
    """Instrument into fresh in-memory exporters; pair with `mcpobs.uninstrument()`."""
    import mcpobs

    captured = CapturedTelemetry()
    mcpobs.uninstrument()
    mcpobs.instrument(tracer_provider=captured.tracer_provider, meter_provider=captured.meter_provider, **options)
    return captured


capture.__signature__ = signature(providers=False)  # type: ignore[attr-defined]
