"""The shop on an mcp 1.x host, served over Streamable HTTP (or SSE) on loopback, instrumented, its spans to a file.

Usage: servers_http.py HOST SPANS_FILE [http|sse]. Prints the MCP endpoint's URL on one line once
it listens, then serves until its stdin closes (or it is killed). Run by the main suite's
cross-line test (tests/test_cross_line.py) with the mcp 1.x venv's Python.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from servers1 import create, http_app  # noqa: E402
from stdio_server import JsonLinesExporter  # noqa: E402

import mcpobs  # noqa: E402
from mcpobs._cli.serving import serve  # noqa: E402


def main() -> None:
    host, spans_file = sys.argv[1], sys.argv[2]
    transport = sys.argv[3] if len(sys.argv) > 3 else "http"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(spans_file)))
    mcpobs.instrument(tracer_provider=provider, clients=False)
    app, path = http_app(create(host), transport)
    with serve(app) as base_url:
        print(base_url + path, flush=True)
        sys.stdin.read()  # until the test closes our stdin


if __name__ == "__main__":
    main()
