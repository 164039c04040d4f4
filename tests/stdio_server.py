"""The shop server over stdio, instrumented, writing its spans as JSON lines to argv[1].

Run by the tests as a subprocess; stdout is the wire, so nothing else may write there.
With MCPOBS_TEST_METRICS=<path> it also writes its metric points there as JSON when it exits;
with MCPOBS_TEST_BROKEN=1 the shop gains a resource whose handler crashes; with
MCPOBS_TEST_SERVER=fastmcp it serves the FastMCP shop, with =lowlevel a lowlevel `Server`
inside `async with stdio_server()`. With MCPOBS_TEST_PLAIN=1 mcpobs is not instrumented at all
(a server without mcpobs).
"""

from __future__ import annotations

import atexit
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

sys.path.insert(0, str(Path(__file__).parent))

import mcpobs


class JsonLinesExporter(SpanExporter):
    def __init__(self, path: str) -> None:
        self.path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with open(self.path, "a") as f:
            for s in spans:
                f.write(
                    json.dumps(
                        {
                            "name": s.name,
                            "kind": s.kind.name,
                            "status": s.status.status_code.name,
                            "description": s.status.description,
                            "trace_id": f"{s.context.trace_id:032x}",
                            "span_id": f"{s.context.span_id:016x}",
                            "parent_id": f"{s.parent.span_id:016x}" if s.parent else None,
                            "attributes": dict(s.attributes or {}),
                        },
                        default=str,
                    )
                    + "\n"
                )
        return SpanExportResult.SUCCESS


def metric_points(reader: object) -> dict[str, list[dict[str, object]]]:
    """Metric points as {name: [{"attributes": ..., "unit": ..., "bounds": ...}]}."""
    data = reader.get_metrics_data()  # type: ignore[attr-defined]
    points: dict[str, list[dict[str, object]]] = {}
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    points.setdefault(metric.name, []).append(
                        {
                            "attributes": dict(point.attributes),
                            "unit": metric.unit,
                            "bounds": list(getattr(point, "explicit_bounds", None) or []),
                        }
                    )
    return points


def write_metrics(reader: object, path: str) -> None:
    with open(path, "w") as f:
        json.dump(metric_points(reader), f, default=str)


def main() -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(sys.argv[1])))
    options: dict[str, object] = {"tracer_provider": provider}
    metrics_file = os.environ.get("MCPOBS_TEST_METRICS")
    if metrics_file:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader

        reader = InMemoryMetricReader()
        options["meter_provider"] = MeterProvider(metric_readers=[reader])
        atexit.register(write_metrics, reader, metrics_file)
    if not os.environ.get("MCPOBS_TEST_PLAIN"):
        mcpobs.instrument(**options)
    framework = os.environ.get("MCPOBS_TEST_SERVER")
    if framework == "fastmcp":
        from fastmcp_shop import create_server as create_fastmcp

        create_fastmcp().run("stdio", show_banner=False)
        return
    if framework == "lowlevel":
        import anyio
        from fastmcp_shop import serve_lowlevel_stdio

        anyio.run(serve_lowlevel_stdio)
        return
    from shop import add_broken_resource, create_server

    server = create_server()
    if os.environ.get("MCPOBS_TEST_BROKEN"):
        add_broken_resource(server)
    server.run("stdio")


if __name__ == "__main__":
    main()
