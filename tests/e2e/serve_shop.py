"""The shop over Streamable HTTP, instrumented by `mcpobs.instrument()` alone.

Run by the end-to-end tests as ``serve_shop.py PORT`` with only standard OTEL_* variables
set. SIGTERM stops uvicorn; mcpobs flushes spans and metrics before the process dies of it.
"""

import sys

import uvicorn
from mcp.server.mcpserver import Context
from shop import create_server

import mcpobs

mcpobs.instrument()
server = create_server()


@server.tool()
async def restock(ctx: Context) -> str:
    """Adds stock: the tool list and the catalog resource change (events for listen streams)."""
    await ctx.notify_tools_changed()
    await ctx.notify_resource_updated("shop://catalog")
    return "restocked"


uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
