"""The shop over stdio for a client nobody here wrote (the MCP Inspector), instrumented.

    stdio_server.py SPANS_FILE METRICS_FILE

Finished spans are appended to SPANS_FILE as JSON lines; the metric points, cumulative, replace
METRICS_FILE every 100 ms and at exit. stdout is the wire: nothing else is written there.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    MetricExporter,
    MetricExportResult,
    MetricsData,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

TESTS = Path(__file__).parent.parent
sys.path.insert(0, str(TESTS))

from stdio_server import JsonLinesExporter  # noqa: E402

import mcpobs  # noqa: E402


class JsonMetricsExporter(MetricExporter):
    """Writes every data point of the latest (cumulative) collection, replacing the file."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    def export(self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any) -> MetricExportResult:
        points = []
        for resource in metrics_data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    for point in metric.data.data_points:
                        value = getattr(point, "count", None)
                        if value is None:
                            value = point.value
                        points.append({"name": metric.name, "attributes": dict(point.attributes), "value": value})
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(points, f, default=str)
        os.replace(tmp, self.path)
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        pass


def main() -> None:
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(sys.argv[1])))
    reader = PeriodicExportingMetricReader(JsonMetricsExporter(sys.argv[2]), export_interval_millis=100)
    mcpobs.instrument(tracer_provider=tracer_provider, meter_provider=MeterProvider(metric_readers=[reader]))
    from shop import create_server

    create_server().run("stdio")


if __name__ == "__main__":
    main()
