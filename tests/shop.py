"""The shop of the seeds, as a small MCPServer that can reach every outcome."""

from __future__ import annotations

from typing import Annotated, Any

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit, ListRoots, Resolve
from pydantic import BaseModel

ORDERS = {"O-1873": "delivered", "O-2001": "shipped"}


class OrderStatus(BaseModel):
    order_id: str
    status: str


class Approval(BaseModel):
    approved: bool


async def ask_approval(order_id: str) -> Elicit[Approval]:
    return Elicit(f"Approve the refund for {order_id}?", Approval)


async def ask_roots() -> ListRoots:
    return ListRoots()


def create_server(name: str = "shop", version: str = "1.0.0", **options: Any) -> MCPServer:
    mcp = MCPServer(name, version=version, **options)

    @mcp.tool()
    def get_order_status(order_id: str) -> OrderStatus:
        """Look up one order's status."""
        if order_id not in ORDERS:
            raise ToolError(f"Unknown order {order_id}; call find_orders first.")
        return OrderStatus(order_id=order_id, status=ORDERS[order_id])

    @mcp.tool()
    def quote_refund(order_id: str, amount_cents: int) -> str:
        """Quote a refund; crashes on a bug for negative amounts."""
        if amount_cents < 0:
            raise RuntimeError("refund ledger corrupted")  # a bug, not a tool error
        return f"refund of {amount_cents} for {order_id}"

    @mcp.tool()
    async def slow_export(ctx: Context, rows: int = 5) -> str:
        """A long-running export that reports progress."""
        for i in range(rows):
            await ctx.report_progress(i + 1, rows, f"exported {i + 1}/{rows}")
        return "done"

    @mcp.tool()
    async def wait_for_stock(sku: str) -> str:
        """Blocks until restocked (never, in tests): a call for clients to give up on."""
        await anyio.sleep(60)
        return f"{sku} in stock"

    @mcp.tool()
    async def approve_refund(
        order_id: str,
        approval: Annotated[Approval, Resolve(ask_approval)],
        roots: Annotated[types.ListRootsResult, Resolve(ask_roots)],
    ) -> str:
        """Two questions in one round: approval (elicitation) and the client's roots."""
        return f"refund for {order_id}: {'approved' if approval.approved else 'refused'}"

    @mcp.tool()
    async def confirm_cancel(ctx: Context, order_id: str) -> str | types.InputRequiredResult:
        """Asks by hand, one question per round: three rounds, the state says which."""
        schema = {"type": "object", "properties": {}}
        if ctx.request_state is None:
            ask = types.ElicitRequest(
                params=types.ElicitRequestFormParams(message=f"Cancel {order_id}?", requested_schema=schema)
            )
            return types.InputRequiredResult(input_requests={"sure": ask}, request_state="asked-once")
        if ctx.request_state == "asked-once":
            ask = types.ElicitRequest(params=types.ElicitRequestFormParams(message="Really?", requested_schema=schema))
            return types.InputRequiredResult(input_requests={"really": ask}, request_state="asked-twice")
        return f"{order_id} cancelled after {ctx.request_state}"

    @mcp.prompt()
    def refund_reply(customer: str) -> str:
        """A reply template."""
        return f"Dear {customer}, your refund is on its way."

    @mcp.resource("shop://catalog")
    def catalog() -> str:
        return "KG-1031 garden hose"

    return mcp


BROKEN_URI = "shop://broken"


def add_broken_resource(mcp: MCPServer) -> None:
    """A resource whose handler crashes: a server error answered with a JSON-RPC error."""

    @mcp.resource(BROKEN_URI)
    def broken() -> str:
        raise RuntimeError("stock database unreachable")
