"""The shop on an mcp 1.x host, served over stdio, instrumented, writing its spans to argv[2].

Usage: servers_stdio.py HOST SPANS_FILE, HOST one of `servers1.HOSTS`. Run by the tests as a
subprocess; stdout is the wire. With MCPOBS_TEST_METRICS=<path> it also writes its metric
points there as JSON when it exits.
"""

from __future__ import annotations

import atexit
import os
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from servers1 import create  # noqa: E402
from stdio_server import JsonLinesExporter, write_metrics  # noqa: E402  # tests/stdio_server.py's, line-neutral

import mcpobs  # noqa: E402


def main() -> None:
    host, spans_file = sys.argv[1], sys.argv[2]
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(spans_file)))
    options: dict[str, object] = {"tracer_provider": provider, "clients": False}
    metrics_file = os.environ.get("MCPOBS_TEST_METRICS")
    if metrics_file:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader

        reader = InMemoryMetricReader()
        options["meter_provider"] = MeterProvider(metric_readers=[reader])
        atexit.register(write_metrics, reader, metrics_file)
    mcpobs.instrument(**options)  # type: ignore[arg-type]
    server = create(host)
    if host == "fastmcp1":
        server.run("stdio")
    elif host == "fastmcp3":
        server.run("stdio", show_banner=False)
    else:
        import anyio
        from mcp.server.stdio import stdio_server

        async def serve() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(serve)


if __name__ == "__main__":
    main()
