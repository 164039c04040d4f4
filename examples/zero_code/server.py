"""A plain MCP server with no telemetry code: `opentelemetry-instrument` adds mcpobs.

Run it instrumented, with spans printed on stderr::

    opentelemetry-instrument --traces_exporter console --metrics_exporter none \\
        python examples/zero_code/server.py

or exported to Jaeger and Prometheus (``scripts/stack`` prints the variables to set)::

    opentelemetry-instrument python examples/zero_code/server.py

`opentelemetry-instrument` loads every installed instrumentor, mcpobs among them (through
its ``opentelemetry_instrumentor`` entry point), before this file runs; the server built
below then gets mcpobs's middleware. Nothing here imports mcpobs.
"""

from __future__ import annotations

import argparse

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

ORDERS = {"O-1873": "delivered", "O-2001": "shipped"}

server = MCPServer("shop", version="1.0.0")


@server.tool()
def get_order_status(order_id: str) -> str:
    """Look up one order's status."""
    if order_id not in ORDERS:
        raise ToolError(f"Unknown order {order_id}")
    return ORDERS[order_id]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="A plain MCP server over Streamable HTTP.")
    parser.add_argument("--port", type=int, default=8000)
    port = parser.parse_args().port
    print(f"shop: serving MCP on http://127.0.0.1:{port}/mcp (Ctrl-C to stop)", flush=True)
    try:
        server.run("streamable-http", host="127.0.0.1", port=port)
    except KeyboardInterrupt:
        print("shop: stopped")
