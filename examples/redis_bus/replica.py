"""One replica of the shop: an MCPServer over Streamable HTTP whose events go through Redis.

    python replica.py --port 8001 --redis redis://127.0.0.1:6379 --name replica-a
    python replica.py --port 8002 --redis redis://127.0.0.1:6379 --name replica-b

Spans go wherever the standard OTEL_* variables say (mcpobs configures the SDK from them),
or, with --spans-file, to a file as JSON lines (what the test reads).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

sys.path.insert(0, str(Path(__file__).parent))

from redis_bus import RedisSubscriptionBus

import mcpobs
from mcpobs import ObservedSubscriptionBus


class JsonLinesExporter(SpanExporter):
    def __init__(self, path: str) -> None:
        self.path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with open(self.path, "a") as f:
            for s in spans:
                record = {
                    "name": s.name,
                    "kind": s.kind.name,
                    "trace_id": f"{s.context.trace_id:032x}",
                    "span_id": f"{s.context.span_id:016x}",
                    "parent_id": f"{s.parent.span_id:016x}" if s.parent else None,
                    "links": [[f"{ln.context.trace_id:032x}", f"{ln.context.span_id:016x}"] for ln in s.links],
                    "attributes": dict(s.attributes or {}),
                    "service": s.resource.attributes.get("service.name"),
                }
                f.write(json.dumps(record, default=str) + "\n")
        return SpanExportResult.SUCCESS


def build(name: str, redis_url: str) -> MCPServer:
    bus = ObservedSubscriptionBus(RedisSubscriptionBus(redis_url))
    server = MCPServer(name, subscriptions=bus)

    @server.tool()
    async def restock(ctx: Context, sku: str) -> str:
        """Restock a product: every replica's listeners hear that the catalog changed."""
        await ctx.notify_tools_changed()
        await ctx.notify_resource_updated(f"shop://stock/{sku}")
        return f"{sku} restocked"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--redis", required=True)
    parser.add_argument("--name", default="shop")
    parser.add_argument("--spans-file")
    args = parser.parse_args()
    if args.spans_file:
        provider = TracerProvider(resource=Resource.create({"service.name": args.name}))
        provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(args.spans_file)))
        mcpobs.instrument(tracer_provider=provider)
    else:
        mcpobs.instrument()
    server = build(args.name, args.redis)
    uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
