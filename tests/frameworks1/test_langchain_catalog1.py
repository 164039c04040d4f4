"""langchain-mcp-adapters' default session pattern against a FastMCP 3 server (issue 52, test (c)).

`MultiServerMCPClient.get_tools()` lists in one session and opens a new session for every tool call,
never listing in it. Every CLIENT `tools/call` span must still carry the schema fingerprint and the
catalog release the client learned for that server: what the canary gate reads.
"""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.trace import SpanKind

import mcpobs
from mcpobs import semconv as S
from mcpobs._cli.serving import serve as serve_http
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio


def fastmcp3_shop() -> Any:
    import fastmcp

    server = fastmcp.FastMCP("shop", version="2.5.0")

    @server.tool
    def get_order_status(order_id: str) -> str:
        """One order's status."""
        return {"O-1873": "delivered"}.get(order_id, "unknown")

    return server


async def test_every_call_of_a_session_per_call_host_carries_the_catalog_facts():
    telemetry = capture()
    try:
        from langchain_mcp_adapters.client import MultiServerMCPClient

        server = fastmcp3_shop()
        with serve_http(server.http_app()) as base:
            client = MultiServerMCPClient({"shop": {"transport": "streamable_http", "url": base + "/mcp"}})
            (tool,) = await client.get_tools()
            for order in ("O-1873", "O-2001", "O-1873"):
                await tool.ainvoke({"order_id": order})  # a new session each time
        calls = [s for s in telemetry.spans() if s.kind is SpanKind.CLIENT and s.name == "tools/call get_order_status"]
        served = [s for s in telemetry.spans() if s.kind is SpanKind.SERVER and s.name == "tools/call get_order_status"]
    finally:
        mcpobs.uninstrument()
    assert len(calls) == 3 and len(served) == 3
    fingerprint = served[0].attributes[S.TOOL_SCHEMA_FINGERPRINT]
    for call in calls:
        assert call.attributes.get(S.TOOL_SCHEMA_FINGERPRINT) == fingerprint, dict(call.attributes)
        assert call.attributes.get(S.CATALOG_RELEASE) == "2.5.0", dict(call.attributes)
    for span in served:  # the fingerprint went with the call, and it is the one served
        assert not span.attributes.get(S.TOOL_SCHEMA_STALE)
