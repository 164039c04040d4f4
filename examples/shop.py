"""The example shop: orders, refunds and stock, as a plain MCP server.

Nothing in here knows about telemetry. The examples next to it serve this server and add
mcpobs with one call; the tools are chosen so a few calls reach the different outcomes:

- ``get_order_status("O-1873")`` is ok; an unknown order is a *tool error* (the caller's
  mistake, reported to the model so it can try again);
- ``quote_refund`` with a negative amount *crashes* (a bug in the server);
- ``check_stock`` is ok for any SKU.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

ORDERS = {"O-1873": "delivered", "O-2001": "shipped"}
STOCK = {"KG-1031": 12, "KG-2040": 0}


class OrderStatus(BaseModel):
    order_id: str
    status: str


def create_shop(name: str = "shop") -> MCPServer:
    """Build the shop server (build it after `mcpobs.instrument()`, so it is instrumented)."""
    shop = MCPServer(name, version="1.0.0")

    @shop.tool()
    def get_order_status(order_id: str) -> OrderStatus:
        """Look up one order's status."""
        if order_id not in ORDERS:
            raise ToolError(f"Unknown order {order_id}; ask the customer for the order number.")
        return OrderStatus(order_id=order_id, status=ORDERS[order_id])

    @shop.tool()
    def quote_refund(order_id: str, amount_cents: int) -> str:
        """Quote a refund for an order."""
        if amount_cents < 0:
            raise RuntimeError("refund ledger corrupted")  # a bug, not the caller's mistake
        return f"refund of {amount_cents / 100:.2f} for {order_id}"

    @shop.tool()
    def check_stock(sku: str) -> int:
        """Units in stock for a SKU."""
        return STOCK.get(sku, 0)

    return shop
