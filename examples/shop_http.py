"""The shop over Streamable HTTP, instrumented with one call: `mcpobs.instrument()`.

Run it::

    python examples/shop_http.py            # serves http://127.0.0.1:8000/mcp until Ctrl-C
    python examples/shop_http.py --port 8123

Telemetry is configured only by the standard OpenTelemetry variables. With none set it
exports OTLP to http://localhost:4318. To see it in Jaeger and Prometheus, run
``scripts/stack`` in another terminal and paste the ``export`` lines it prints here first;
to see spans in this terminal instead::

    OTEL_TRACES_EXPORTER=console OTEL_METRICS_EXPORTER=none python examples/shop_http.py

Then call it from any MCP client, for example the SDK's::

    async with mcp.Client("http://127.0.0.1:8000/mcp") as client:
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
"""

from __future__ import annotations

import argparse
import os

from shop import create_shop

import mcpobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()

    mcpobs.instrument()  # before building the server; reads OTEL_* for where to export
    shop = create_shop()

    settings = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith("OTEL_"))
    print(f"shop: serving MCP on http://127.0.0.1:{args.port}/mcp (Ctrl-C to stop)")
    print("telemetry: " + (", ".join(settings) if settings else "OTLP to http://localhost:4318 (no OTEL_* set)"))
    print(flush=True)
    try:
        shop.run("streamable-http", host="127.0.0.1", port=args.port)
    except KeyboardInterrupt:
        print("shop: stopped")  # spans still buffered are flushed at exit


if __name__ == "__main__":
    main()
