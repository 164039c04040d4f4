"""`get_order_status` in three releases on FastMCP 3 (mcp 1.x), for the contract tools' tests
(tests/sdk1/test_contract1.py): `release` serves today's traffic, `optional` adds an optional
`region`, `required` a required one. FastMCP 3 closes every input schema (`additionalProperties: false`).
"""

import fastmcp
from mcp.server.fastmcp import FastMCP as FastMCP1
from mcp.server.lowlevel import Server


def release() -> fastmcp.FastMCP:
    server = fastmcp.FastMCP("shop", version="1.0.0")

    @server.tool
    def get_order_status(order_id: str) -> str:
        """One order's status."""
        return {"O-1873": "delivered"}.get(order_id, "unknown")

    return server


def optional() -> fastmcp.FastMCP:
    server = fastmcp.FastMCP("shop", version="1.1.0")

    @server.tool
    def get_order_status(order_id: str, region: str = "eu") -> str:
        """One order's status."""
        return "unknown"

    return server


def required() -> fastmcp.FastMCP:
    server = fastmcp.FastMCP("shop", version="2.0.0")

    @server.tool
    def get_order_status(order_id: str, region: str) -> str:
        """One order's status."""
        return "unknown"

    return server


def fastmcp1() -> FastMCP1:
    server = FastMCP1("shop")

    @server.tool()
    def get_order_status(order_id: str) -> str:
        """One order's status."""
        return "unknown"

    return server


def lowlevel() -> Server:
    import mcp.types as types

    server = Server("shop")

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        schema = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}
        return [types.Tool(name="get_order_status", description="One order's status.", inputSchema=schema)]

    @server.call_tool()
    async def call_tool(name: str, arguments: dict[str, object]) -> list[types.TextContent]:
        return [types.TextContent(type="text", text="unknown")]

    return server
