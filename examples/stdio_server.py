"""The shop over stdio, instrumented, and how a host launches it.

A host (a desktop assistant, an IDE, an agent) starts a stdio server as a subprocess and
speaks MCP over its stdin and stdout, so nothing else may ever be written to stdout. mcpobs
never does: the console exporters write to stderr and OTLP goes over the network. A host's
configuration usually looks like this (the ``env`` is where telemetry is configured)::

    {"mcpServers": {"shop": {
        "command": "python",
        "args": ["examples/stdio_server.py"],
        "env": {"OTEL_SERVICE_NAME": "shop", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318"}}}}

A host written with the SDK passes its own OpenTelemetry settings, and only those, with
``StdioServerParameters(..., env=mcpobs.otel_env(service_name="shop"))``: by default the SDK
starts the server with a filtered environment that has none of the host's ``OTEL_*``, and
``service_name`` gives the server its own name rather than the host's.

Play the host yourself::

    python examples/stdio_server.py --host

launches this file as a stdio server with ``OTEL_TRACES_EXPORTER=console``, makes three
calls, and prints what came back; the server's spans appear on its stderr (your terminal),
one JSON object per line.
"""

from __future__ import annotations

import sys

import anyio
from mcp import Client, StdioServerParameters
from shop import create_shop

import mcpobs


def serve() -> None:
    """What the host runs: the instrumented shop on stdin/stdout."""
    mcpobs.instrument()
    print("shop: serving MCP on stdio", file=sys.stderr)  # stderr: stdout is the wire
    create_shop().run("stdio")


async def host() -> None:
    """Launch `serve()` in a subprocess the way a host does, and call it."""
    server = StdioServerParameters(
        command=sys.executable,
        args=[__file__],
        # The SDK gives the server a filtered environment, without the host's OTEL_*: pass them on,
        # and only them (not the whole environment; the OTLP headers stay out unless headers=True),
        # under the server's own service name.
        env={
            **mcpobs.otel_env(service_name="shop"),
            "OTEL_TRACES_EXPORTER": "console",
            "OTEL_METRICS_EXPORTER": "none",
        },
    )
    async with Client(server) as client:
        for tool, arguments in [
            ("get_order_status", {"order_id": "O-1873"}),
            ("get_order_status", {"order_id": "O-404"}),
            ("check_stock", {"sku": "KG-1031"}),
        ]:
            result = await client.call_tool(tool, arguments)
            text = result.content[0].text.replace("\n", " ") if result.content else ""
            print(f"host: {tool}({arguments}) -> {'error: ' if result.is_error else ''}{text}")


if __name__ == "__main__":
    if "--host" in sys.argv[1:]:
        anyio.run(host)
    else:
        serve()
