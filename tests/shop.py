"""The shop of the seeds, as a small MCPServer that can reach every outcome."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

ORDERS = {"O-1873": "delivered", "O-2001": "shipped"}


class OrderStatus(BaseModel):
    order_id: str
    status: str


def create_server(name: str = "shop", version: str = "1.0.0") -> MCPServer:
    mcp = MCPServer(name, version=version)

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

    @mcp.prompt()
    def refund_reply(customer: str) -> str:
        """A reply template."""
        return f"Dear {customer}, your refund is on its way."

    @mcp.resource("shop://catalog")
    def catalog() -> str:
        return "KG-1031 garden hose"

    return mcp
