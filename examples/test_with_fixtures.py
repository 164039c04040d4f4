"""Testing your own MCP server's telemetry with the ``mcpobs_telemetry`` pytest fixture.

Installing mcpobs registers a pytest plugin; the fixture instruments mcpobs into in-memory
exporters for one test and removes it afterwards. Build the server *inside* the test (after
instrumentation, as in production after `mcpobs.instrument()`), call it with the SDK's
`Client`, and assert on what your dashboards and alerts will see. Run it::

    pytest examples/test_with_fixtures.py -v
"""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from opentelemetry.trace import StatusCode

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio


def create_server() -> MCPServer:
    """Your server; in a real project you would import it."""
    server = MCPServer("shop")

    @server.tool()
    def get_order_status(order_id: str) -> str:
        """Look up one order's status."""
        if order_id != "O-1873":
            raise ToolError(f"Unknown order {order_id}")
        return "delivered"

    return server


async def test_an_unknown_order_is_a_tool_error_not_a_bug(mcpobs_telemetry):
    async with Client(create_server()) as client:
        result = await client.call_tool("get_order_status", {"order_id": "O-404"})
    assert result.is_error
    span = mcpobs_telemetry.server_span("tools/call get_order_status")
    assert span.attributes[S.OUTCOME] == S.Outcome.TOOL_ERROR  # the caller's mistake: no page at night
    assert span.status.status_code is StatusCode.ERROR


async def test_every_call_is_counted_by_outcome(mcpobs_telemetry):
    async with Client(create_server()) as client:
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
        await client.call_tool("get_order_status", {"order_id": "O-404"})
    tool = {S.GEN_AI_TOOL_NAME: "get_order_status"}
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, {**tool, S.OUTCOME: S.Outcome.OK}) == 2
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, {**tool, S.OUTCOME: S.Outcome.TOOL_ERROR}) == 1


async def test_the_order_number_is_not_recorded(mcpobs_telemetry):
    async with Client(create_server()) as client:
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
    for span in mcpobs_telemetry.spans():
        assert not any("O-1873" in str(value) for value in span.attributes.values())
