"""The shop over Streamable HTTP, instrumented by `mcpobs.instrument()` alone.

Run by the end-to-end tests as ``serve_shop.py PORT`` with only standard OTEL_* variables
set. SIGTERM stops uvicorn; mcpobs flushes spans and metrics before the process dies of it.
The same process serves, at ``/billing/mcp``, a bearer-protected billing server that
requires the ``billing:write`` scope: the requests it refuses (401, 403) are the shop
service's access refusals, as a server behind one auth layer records them.
"""

import sys
from contextlib import AsyncExitStack, asynccontextmanager

import uvicorn
from mcp.server.mcpserver import Context
from pydantic import BaseModel
from shop import create_server
from starlette.applications import Starlette
from starlette.routing import Mount
from test_client_failures import protected_server

import mcpobs

mcpobs.instrument()
server = create_server()
BILLING_SCOPE = "billing:write"


@server.tool()
def override_refund_limit(order_id: str) -> str:
    """Refunds above the limit: this agent is not allowed (access refused in the handler)."""
    raise PermissionError(f"this agent may not override the refund limit of {order_id}")


@server.tool()
async def restock(ctx: Context) -> str:
    """Adds stock: the tool list and the catalog resource change (events for listen streams)."""
    await ctx.notify_tools_changed()
    await ctx.notify_resource_updated("shop://catalog")
    return "restocked"


class StockV1(BaseModel):
    sku: str
    on_hand: int


class StockV2(BaseModel):
    sku: str
    count: int  # release 2 renamed on_hand


def check_stock_v1(sku: str) -> StockV1:
    """Units on hand."""
    return StockV1(sku=sku, on_hand=3)


def check_stock_v2(sku: str) -> StockV2:
    """Units on hand."""
    return StockV2(sku=sku, count=3)


server.add_tool(check_stock_v1, name="check_stock")
releases = [check_stock_v2, check_stock_v1]


@server.tool()
def release_check_stock() -> str:
    """A live release while clients stay connected: check_stock's output field is renamed (or back)."""
    server.remove_tool("check_stock")
    server.add_tool(releases[0], name="check_stock")
    releases.reverse()
    return "released"


shop_app = server.streamable_http_app()
billing_app = protected_server([BILLING_SCOPE]).streamable_http_app()


@asynccontextmanager
async def lifespan(app: Starlette):
    """Mounted apps get no lifespan of their own: run both session managers here."""
    async with AsyncExitStack() as stack:
        for mounted in (shop_app, billing_app):
            await stack.enter_async_context(mounted.router.lifespan_context(mounted))
        yield


app = Starlette(routes=[Mount("/billing", app=billing_app), Mount("/", app=shop_app)], lifespan=lifespan)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
