"""The shop again, as a FastMCP 4 server: the same mistakes as `shop.py`, on FastMCP's own paths."""

from __future__ import annotations

from typing import Any

from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError

ORDERS = {"O-1873": "delivered", "O-2001": "shipped"}


def create_server(name: str = "fastshop", **options: Any) -> FastMCP:
    mcp: FastMCP = FastMCP(name, version="1.0.0", **options)

    @mcp.tool
    def get_order_status(order_id: str) -> dict[str, str]:
        """Look up one order's status."""
        if order_id not in ORDERS:
            raise ToolError(f"Unknown order {order_id}; call find_orders first.")
        return {"order_id": order_id, "status": ORDERS[order_id]}

    @mcp.tool
    def quote_refund(order_id: str, amount_cents: int) -> str:
        """Quote a refund; crashes on a bug for negative amounts."""
        if amount_cents < 0:
            raise RuntimeError("refund ledger corrupted")  # a bug, not a tool error
        return f"refund of {amount_cents} for {order_id}"

    @mcp.tool
    async def slow_export(ctx: Context, rows: int = 5) -> str:
        """A long-running export that reports progress."""
        for i in range(rows):
            await ctx.report_progress(i + 1, rows, f"exported {i + 1}/{rows}")
        return "done"

    @mcp.prompt
    def refund_reply(customer: str) -> str:
        """A reply to a refund request."""
        return f"Dear {customer}, your refund is on its way."

    @mcp.resource("shop://catalog")
    def catalog() -> str:
        """The catalog."""
        return "widgets, gadgets"

    return mcp


def create_lowlevel(name: str = "lowshop", schema_hook: bool = True) -> Any:
    """A lowlevel `Server` with one tool; without `schema_hook` the SDK resolves tool schemas by listing."""
    import mcp_types as types
    from mcp.server.lowlevel.server import Server

    tool = types.Tool(
        name="echo", input_schema={"type": "object", "properties": {"text": {"type": "string"}}}, description="echo"
    )

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=str(params.arguments))])

    options: dict[str, Any] = {"on_list_tools": list_tools, "on_call_tool": call_tool}
    if schema_hook:
        options["get_tool_input_schema"] = lambda name: tool.input_schema if name == "echo" else None
    return Server(name, **options)


async def serve_lowlevel_stdio() -> None:
    from mcp.server.stdio import stdio_server

    server = create_lowlevel()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
