"""`get_order_status` in three releases, for the replay's baseline test (tests/test_replay_baseline.py).

`release` serves today's traffic (`order_id: str`, required); `optional` adds an optional `region`;
`required` adds a required one.
"""

from mcp.server.mcpserver import MCPServer


def _server(version: str) -> MCPServer:
    return MCPServer("shop", version=version)


def release() -> MCPServer:
    server = _server("1.0.0")

    @server.tool()
    def get_order_status(order_id: str) -> str:
        """One order's status."""
        return {"O-1873": "delivered"}.get(order_id, "unknown")

    return server


def optional() -> MCPServer:
    server = _server("1.1.0")

    @server.tool()
    def get_order_status(order_id: str, region: str = "eu") -> str:
        """One order's status."""
        return "unknown"

    return server


def required() -> MCPServer:
    server = _server("2.0.0")

    @server.tool()
    def get_order_status(order_id: str, region: str) -> str:
        """One order's status."""
        return "unknown"

    return server
