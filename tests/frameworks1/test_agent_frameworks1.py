"""Agent frameworks pinned to mcp 1.x as MCP clients, each calling tools through its own API (no
model), instrumented, against an instrumented mcp 2.3 server (`MCPServer` and FastMCP 4) run from
the main venv, over Streamable HTTP and over stdio.

Each call is one CLIENT span with the connection's attributes, the server's span its child (one
trace across the two SDK lines), and the client's (outcome, boundary) equal to the server's for
ok, a `ToolError`, a crash, an unknown tool and bad arguments. Run by scripts/test-frameworks1.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from clients import CALLS, EXPECTED, client_spans, outcome_of, server23_http, server23_stdio, server_spans
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

TABLES = Path(os.environ["MCPOBS_FRAMEWORK_TABLES"]) if os.environ.get("MCPOBS_FRAMEWORK_TABLES") else None
"""Where to append each run's outcome table (JSON lines), for the closing note."""

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def _each(call: Call) -> list[str]:
    """Every call through the framework's own API; what the host saw (a result, or what it raised)."""
    seen = []
    for _, name, arguments in CALLS:
        try:
            result = await call(name, arguments)
            seen.append("error" if getattr(result, "is_error", getattr(result, "isError", False)) else "result")
        except Exception as exc:  # the framework's own choice (langchain raises ToolException)
            seen.append(type(exc).__name__)
    return seen


async def langchain(target: Any) -> list[str]:
    import mcp.types as types
    from langchain_mcp_adapters.client import MultiServerMCPClient
    from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool

    connection: Any = (
        {"transport": "streamable_http", "url": target}
        if isinstance(target, str)
        else {"transport": "stdio", "command": target.command, "args": target.args, "env": target.env}
    )
    tools = {tool.name: tool for tool in await MultiServerMCPClient({"shop": connection}).get_tools()}

    async def call(name: str, arguments: dict[str, Any]) -> Any:
        tool = tools.get(name)
        if tool is None:  # a name the model made up: a tool the server never listed
            unlisted = types.Tool(name=name, inputSchema={"type": "object"})
            tool = convert_mcp_tool_to_langchain_tool(None, unlisted, connection=connection)
        return await tool.ainvoke(arguments)  # a session per call

    return await _each(call)


async def mcp_use(target: Any) -> list[str]:
    from mcp_use import MCPClient

    server: dict[str, Any] = (
        {"url": target}
        if isinstance(target, str)
        else {"command": target.command, "args": target.args, "env": target.env}
    )
    client = MCPClient(config={"mcpServers": {"shop": server}})
    try:
        session = await client.create_session("shop")
        assert session is not None
        return await _each(session.call_tool)
    finally:
        await client.close_all_sessions()


async def fastmcp_client(target: Any) -> list[str]:
    import fastmcp
    from fastmcp.client.transports import StdioTransport

    transport = target if isinstance(target, str) else StdioTransport(target.command, target.args, env=target.env)
    async with fastmcp.Client(transport) as client:
        seen = await _each(lambda name, args: client.call_tool(name, args, raise_on_error=False))
    if not isinstance(transport, str):
        await transport.close()  # a stdio transport keeps its session alive past the block
    return seen


FRAMEWORKS = {"langchain-mcp-adapters": langchain, "mcp-use": mcp_use, "fastmcp.Client": fastmcp_client}


def _record(framework: str, server: str, transport: str, client: list[Any], served: list[Any]) -> None:
    if TABLES is not None:
        with TABLES.open("a") as f:
            row = {"framework": framework, "server": server, "transport": transport, "client": client}
            f.write(json.dumps({**row, "server_side": served}) + "\n")


def _agree(telemetry: Any, spans_file: Path) -> tuple[list[Any], list[Any], list[Any]]:
    """The calls' CLIENT spans, each paired with its server span (its child); both outcome tables."""
    calls = [s for s in client_spans(telemetry) if s.name.startswith("tools/call")]
    # one CLIENT span per call: the framework's own spans (FastMCP's, on the global provider) are not doubled
    assert len([s for s in telemetry.spans() if s.kind is SpanKind.CLIENT and "tools/call" in s.name]) == len(CALLS)
    served = {s["parent_id"]: s for s in server_spans(spans_file, "tools/call", len(CALLS))}
    pairs = [(c, served.get(f"{c.context.span_id:016x}")) for c in calls]
    assert all(s is not None for _, s in pairs), "each server span is its client span's child"
    assert all(s["trace_id"] == f"{c.context.trace_id:032x}" for c, s in pairs if s is not None)
    assert [c.name for c, _ in pairs] == [s["name"] for _, s in pairs if s is not None]
    client_table = [outcome_of(c.attributes) for c, _ in pairs]
    server_table = [outcome_of(s["attributes"]) for _, s in pairs if s is not None]
    return calls, client_table, server_table


@pytest.fixture
def telemetry(mcpobs_telemetry, monkeypatch):
    """mcpobs's capture, also as the global tracer provider (where FastMCP 3 opens its own spans)."""
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", mcpobs_telemetry.tracer_provider)
    return mcpobs_telemetry


@pytest.mark.parametrize("server_kind", ["mcpserver", "fastmcp"])
@pytest.mark.parametrize("framework", list(FRAMEWORKS))
async def test_a_framework_over_http_agrees_with_the_server(telemetry, framework, server_kind, tmp_path):
    spans_file = tmp_path / "server-spans.jsonl"
    with server23_http(spans_file, server_kind) as base:
        port = int(base.rsplit(":", 1)[1])
        await FRAMEWORKS[framework](base + "/mcp")
    calls, client_table, server_table = _agree(telemetry, spans_file)
    where = {
        S.SERVER_ADDRESS: "127.0.0.1",
        S.SERVER_PORT: port,
        S.NETWORK_TRANSPORT: "tcp",
        S.NETWORK_PROTOCOL_NAME: "http",
        S.NETWORK_PROTOCOL_VERSION: "1.1",
        S.MCP_METHOD_NAME: "tools/call",
        S.MCP_PROTOCOL_VERSION: "2025-11-25",
    }
    for span in calls:
        assert {k: span.attributes.get(k) for k in where} == where, span.name
    _record(framework, server_kind, "http", client_table, server_table)
    assert server_table == EXPECTED
    assert client_table == server_table


STDIO_LABELLED = {"langchain-mcp-adapters", "fastmcp.Client"}
"""mcp-use runs its stdio transport in a task of its own, which leaves nothing to tie it to its
session: its spans there have no network labels (docs/frameworks.md)."""


@pytest.mark.parametrize("server_kind", ["mcpserver", "fastmcp"])
@pytest.mark.parametrize("framework", list(FRAMEWORKS))
async def test_a_framework_over_stdio_agrees_with_the_server(telemetry, framework, server_kind, tmp_path):
    spans_file = tmp_path / "server-spans.jsonl"
    await FRAMEWORKS[framework](server23_stdio(spans_file, server_kind))
    calls, client_table, server_table = _agree(telemetry, spans_file)
    labelled = "pipe" if framework in STDIO_LABELLED else None
    for span in calls:
        assert span.attributes.get(S.NETWORK_TRANSPORT) == labelled, span.name
        assert span.attributes.get(S.MCP_PROTOCOL_VERSION) == "2025-11-25", span.name
    _record(framework, server_kind, "stdio", client_table, server_table)
    assert server_table == EXPECTED
    assert client_table == server_table
