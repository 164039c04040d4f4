"""A client names only what its session listed, within the server's caps, whatever the server lists.

A server decides what its tools/list says: a hostile or broken one can list a different set of
names to every session, names 100,000 characters long, or names that are not valid text. A
caller (or a model) decides what names a client sends. Neither may add span names or metric
series without bound: a name is used only when this session listed it, it is at most
`MAX_NAME_LENGTH` characters of valid text, and it is among the first `MAX_LEARNED_NAMES`
distinct names admitted in this process (across sessions); anything else is `_OTHER`, and the
name as sent stays findable as a (length-bounded) span attribute.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from mcp import Client
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, ListToolsResult, TextContent, Tool
from opentelemetry.trace import SpanKind

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

SESSIONS = 60
TOOLS_PER_SESSION = 201
LONG = "L" * 100_000


def hostile_server() -> Server:
    """Lists 201 tools per session, every session a different set, one name 100,000 characters long."""
    listed = 0

    async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
        nonlocal listed
        listed += 1
        names = [f"s{listed}_t{i}" for i in range(TOOLS_PER_SESSION - 2)] + [LONG, f"bad\ud800{listed}"]
        return ListToolsResult(tools=[Tool(name=n, input_schema={"type": "object"}) for n in names])

    async def call_tool(ctx: Any, params: Any) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text="ok")])

    return Server("hostile-listing", on_list_tools=list_tools, on_call_tool=call_tool)


def label_values(telemetry: Any, metric: str, key: str) -> set[Any]:
    return {p.attributes.get(key) for p in telemetry.points(metric)}


async def test_a_hostile_listing_cannot_grow_client_names_or_series(mcpobs_telemetry):
    server = hostile_server()
    calls = 0
    for _ in range(SESSIONS):
        async with Client(server, mode="legacy") as client:
            tools = (await client.list_tools()).tools
            # every name of this session's own listing, the long and the invalid one among them
            for tool in tools[:20] + tools[-2:]:
                await client.call_tool(tool.name, {})
                calls += 1
    client = [s for s in mcpobs_telemetry.spans() if s.kind is SpanKind.CLIENT and s.name.startswith("tools/call")]
    assert len(client) == calls
    names = {s.name for s in client}
    assert len(names) <= S.MAX_LEARNED_NAMES + 1, len(names)  # the cap, and `tools/call` for the rest
    assert max(len(n) for n in names) <= len("tools/call ") + S.MAX_NAME_LENGTH
    for span in client:
        span.name.encode("utf-8")
        assert len(span.attributes[S.GEN_AI_TOOL_NAME]) <= S.DEFAULT_MAX_ATTRIBUTE_LENGTH
    for metric in (S.CLIENT_REQUESTS.name, S.CLIENT_OPERATION_DURATION.name):
        labels = label_values(mcpobs_telemetry, metric, S.GEN_AI_TOOL_NAME) - {None}
        assert len(labels) <= S.MAX_LEARNED_NAMES + 1, (metric, len(labels))
        assert S.OTHER in labels
        assert all(len(label) <= S.MAX_NAME_LENGTH for label in labels)
        for label in labels:
            label.encode("utf-8")
    # the counts are whole: every call counted once, named or `_OTHER`
    tools_calls = {S.MCP_METHOD_NAME: "tools/call"}
    assert mcpobs_telemetry.total(S.CLIENT_REQUESTS.name, tools_calls) == calls


def shop() -> MCPServer:
    server = MCPServer("shop")

    @server.tool()
    def get_order_status(order_id: str) -> str:
        return "shipped"

    @server.prompt()
    def summary(order_id: str) -> str:
        return f"summarize {order_id}"

    return server


async def test_unknown_prompt_names_are_other_before_and_after_list_prompts(mcpobs_telemetry):
    async with Client(shop(), mode="legacy") as client:
        for i in range(550):
            with contextlib.suppress(Exception):
                await client.get_prompt(f"invented_{i}", {})
        await client.list_prompts()
        for i in range(550, 1100):
            with contextlib.suppress(Exception):
                await client.get_prompt(f"invented_{i}", {})
        await client.get_prompt("summary", {"order_id": "O-1"})
    labels = label_values(mcpobs_telemetry, S.CLIENT_REQUESTS.name, S.GEN_AI_PROMPT_NAME) - {None}
    assert labels == {S.OTHER, "summary"}, sorted(labels)[:5]
    spans = {s.name for s in mcpobs_telemetry.spans() if s.kind is SpanKind.CLIENT}
    assert {n for n in spans if n.startswith("prompts/get")} == {"prompts/get", "prompts/get summary"}
    one = next(s for s in mcpobs_telemetry.spans() if s.kind is SpanKind.CLIENT and s.name == "prompts/get")
    assert one.attributes[S.GEN_AI_PROMPT_NAME].startswith("invented_")  # the name as sent stays findable


async def test_unknown_tool_names_before_any_listing_are_other(mcpobs_telemetry):
    async with Client(shop(), mode="legacy") as client:
        for i in range(300):
            await client.call_tool(f"invented_{i}", {})  # the server answers isError; the SDK lists nothing
        # a call that succeeds: the SDK lists tools to validate its result, and the call is named
        await client.call_tool("get_order_status", {"order_id": "O-1"})
    labels = label_values(mcpobs_telemetry, S.CLIENT_REQUESTS.name, S.GEN_AI_TOOL_NAME) - {None}
    assert labels == {S.OTHER, "get_order_status"}, sorted(labels)[:5]
    spans = {s.name for s in mcpobs_telemetry.spans() if s.kind is SpanKind.CLIENT}
    assert {n for n in spans if n.startswith("tools/call")} == {"tools/call", "tools/call get_order_status"}
