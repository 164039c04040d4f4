"""In-memory telemetry for a worker: providers that discard spans but count them, and the metric points.

Spans go to an exporter that counts and drops them (exporting is not what a per-call count
prices; saturation.py exports for real); metrics stay in an `InMemoryMetricReader`, which a
worker reads before and after its calls to say which points its calls moved.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

from harness.floor import payload

PAYLOAD = "MCPOBS_BENCH_PAYLOAD"
"""The attributes of mcpobs's `tools/call echo` spans by kind (JSON), for `floor-payload`."""
SAMPLED = ("mcpobs-sampled", "floor-sampled")


class Counts:
    spans = 0
    sentry = 0
    attributes: dict[str, dict] = {}
    """The last `tools/call echo` span's attributes, by span kind (`--describe-spans`)."""
    reader = None
    """The configuration's metric reader, for `--describe-spans` to say what was recorded."""


async def quiet(longest: float = 2.0) -> None:
    """Wait until no span has ended for 50 ms (at most `longest` s). Over HTTP a server ends a call's
    span once its answer is written, a moment after its client has it: a warm-up call's span ending
    inside the measured window would count as the window's (1.2 spans per call seen under load)."""
    import anyio

    last, waited = -1, 0.0
    while Counts.spans != last and waited < longest:
        last = Counts.spans
        await anyio.sleep(0.05)
        waited += 0.05


def providers(config: str, describe: bool = False):
    """The tracer and meter providers of an overhead configuration (by its name in overhead.py's CONFIGS)."""
    from opentelemetry import trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    class Discard(SpanExporter):
        def export(self, spans):
            Counts.spans += len(spans)
            if describe:
                for span in spans:
                    if span.name.endswith("tools/call echo"):  # the SDK's is `MCP send tools/call echo`
                        Counts.attributes[span.kind.name] = dict(span.attributes)
            return SpanExportResult.SUCCESS

    if config in ("bare", "sentry", "fastmcp-bare"):
        return None, None
    Counts.reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[Counts.reader])
    if config == "histograms-only":
        return None, meter_provider
    sampler = ParentBased(TraceIdRatioBased(0.01)) if config in SAMPLED else None
    tracer_provider = TracerProvider(sampler=sampler) if sampler else TracerProvider()
    if config == "floor-payload":
        tracer_provider.add_span_processor(payload(json.loads(os.environ[PAYLOAD])))
    tracer_provider.add_span_processor(SimpleSpanProcessor(Discard()))
    trace.set_tracer_provider(tracer_provider)  # the SDK's own spans use the global provider
    return tracer_provider, meter_provider


def each_point(reader: Any) -> Iterator[tuple[Any, Any]]:
    """(metric, data point) for every point the reader holds now."""
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    yield metric, point


def points() -> dict[tuple[str, str], object]:
    """(metric name, its labels as JSON) -> the point's value (a sum, or a histogram's count)."""
    found: dict[tuple[str, str], object] = {}
    if Counts.reader is None:
        return found
    for metric, point in each_point(Counts.reader):
        value = getattr(point, "value", None)
        found[metric.name, json.dumps(dict(point.attributes), sort_keys=True)] = point.count if value is None else value
    return found


def recorded(before: dict[tuple[str, str], object]) -> dict[str, list[dict]]:
    """What the measured calls recorded (`--describe-spans`): metric name -> the label sets whose points moved."""
    found: dict[str, list[dict]] = {}
    for (name, labels), value in points().items():
        if before.get((name, labels)) != value:
            found.setdefault(name, []).append(json.loads(labels))
    return found
