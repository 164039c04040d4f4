"""The shop on mcp 2.3, instrumented, over Streamable HTTP on loopback: the other line, for tests/sdk1.

Run by tests/sdk1/clients.py in the main venv (`.venv`, mcp 2.3) as `python clients_server23.py
SPANS_FILE`: it prints the port it listens on (one line), then serves until terminated, writing
each finished span to SPANS_FILE as a JSON line (tests/stdio_server.py's exporter). With
MCPOBS_TEST_SERVER=fastmcp it serves the FastMCP 4 shop instead of the `MCPServer` one.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))  # tests/: shop.py, fastmcp_shop.py, stdio_server.py

import uvicorn
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from stdio_server import JsonLinesExporter

import mcpobs


def main() -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(sys.argv[1])))
    mcpobs.instrument(tracer_provider=provider)
    if os.environ.get("MCPOBS_TEST_SERVER") == "fastmcp":
        from fastmcp_shop import create_server as create_fastmcp

        app = create_fastmcp().http_app()
    else:
        from shop import create_server

        app = create_server().streamable_http_app()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    print(sock.getsockname()[1], flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on")).run(sockets=[sock])


if __name__ == "__main__":
    main()
