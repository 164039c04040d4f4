"""What a catalog costs a model's context on mcp 1.x (issue 53): the lowlevel `Server`, FastMCP 1 and FastMCP 3.

A tool's description grows by 2,000 characters between two releases: the server's and the
client's tools/list spans say so, in bytes (exactly 2,000 more) and tokens (500 more by the
estimate), driven by a 1.x `ClientSession` and by FastMCP 3's `fastmcp.Client`.
"""

from __future__ import annotations

from typing import Any

import fastmcp
import pytest
from mcp import types
from opentelemetry.trace import SpanKind
from servers1 import HOSTS
from transports1 import session_over

from mcpobs import semconv as S
from mcpobs._core import cost

pytestmark = pytest.mark.anyio

SHORT = "Look up one order's status."
GROWTH = 2000
LONG = SHORT + " " + "x" * (GROWTH - 1)
NUMBERS = (S.CATALOG_BYTES, S.CATALOG_TOKENS, S.CATALOG_TOOLS, S.CATALOG_LARGEST_TOOL, S.CATALOG_LARGEST_BYTES)
SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}


def release(host: str, description: str, version: str) -> Any:
    if host == "lowlevel":
        from mcp.server.lowlevel.server import Server

        server = Server("shop", version=version)

        @server.list_tools()
        async def list_tools() -> list[types.Tool]:
            return [types.Tool(name="get_order_status", description=description, inputSchema=SCHEMA)]

        return server

    def get_order_status(order_id: str) -> str:
        return "delivered"

    if host == "fastmcp1":
        from mcp.server.fastmcp import FastMCP

        mcp = FastMCP("shop")
        mcp._mcp_server.version = version
    else:
        mcp = fastmcp.FastMCP("shop", version=version)
    mcp.tool(description=description)(get_order_status)
    return mcp


def numbers(span: Any) -> tuple[Any, ...]:
    return tuple(span.attributes.get(name) for name in NUMBERS)


async def list_with(driver: str, server: Any) -> None:
    if driver == "session":
        async with session_over("memory", server) as session:
            await session.list_tools()
    else:
        async with fastmcp.Client(server) as client:
            await client.list_tools()


@pytest.mark.parametrize(
    ("host", "driver"), [*((h, "session") for h in HOSTS), ("fastmcp3", "fastmcp"), ("fastmcp1", "fastmcp")]
)
async def test_a_description_grown_by_2000_characters_shows_on_both_sides(mcpobs_telemetry, host, driver):
    seen = []
    for description, version in ((SHORT, "1.0.0"), (LONG, "2.0.0")):
        mcpobs_telemetry.clear()
        await list_with(driver, release(host, description, version))
        (server_span,) = mcpobs_telemetry.spans_named("tools/list", SpanKind.SERVER)
        (client_span,) = mcpobs_telemetry.spans_named("tools/list", SpanKind.CLIENT)
        assert numbers(server_span) == numbers(client_span)  # both sides say the same
        assert server_span.attributes[S.CATALOG_FINGERPRINT] == client_span.attributes[S.CATALOG_FINGERPRINT]
        seen.append(dict(zip(NUMBERS, numbers(server_span), strict=True)))
    before, after = seen
    assert after[S.CATALOG_BYTES] - before[S.CATALOG_BYTES] == GROWTH
    assert after[S.CATALOG_TOKENS] - before[S.CATALOG_TOKENS] == GROWTH // cost.BYTES_PER_TOKEN
    assert after[S.CATALOG_LARGEST_TOOL] == "get_order_status" and after[S.CATALOG_TOOLS] == 1
    sizes = {p.attributes[S.SERVER_VERSION]: p.value for p in mcpobs_telemetry.points(S.CATALOG_SIZE.name)}
    assert sizes == {"1.0.0": before[S.CATALOG_BYTES], "2.0.0": after[S.CATALOG_BYTES]}
