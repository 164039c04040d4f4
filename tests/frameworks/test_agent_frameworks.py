"""Agent frameworks as MCP clients, each calling tools through its own API (no model), against an
instrumented `MCPServer` and an instrumented FastMCP server, over Streamable HTTP and over stdio
where the framework offers it.

Each call is one CLIENT span with the connection's attributes, the server's span its child, and
the client's (outcome, boundary) equal to the server's for ok, a `ToolError`, a crash, an
unknown tool and bad arguments. Run by scripts/test-frameworks in its own venv (pinned there).
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.trace import SpanKind
from transports import read_spans, serve_http, stdio_params

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("ok", "get_order_status", {"order_id": "O-1873"}),
    ("tool error", "get_order_status", {"order_id": "O-7144"}),
    ("crash", "quote_refund", {"order_id": "O-1873", "amount_cents": -5}),
    ("unknown tool", "shop__get_order_status", {"order_id": "O-1873"}),
    ("bad arguments", "quote_refund", {"order_id": "O-1873", "amount_cents": "many"}),
]
EXPECTED = [
    ("ok", None),
    ("tool_error", "handler"),
    ("server_error", "handler"),
    ("client_error", "discovery"),
    ("client_error", "arguments"),
]
TABLES = Path(os.environ.get("MCPOBS_FRAMEWORK_TABLES", "")) if os.environ.get("MCPOBS_FRAMEWORK_TABLES") else None
"""Where to append each run's outcome table (JSON lines), for the closing note."""

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def _each(call: Call) -> list[str]:
    """Every call through the framework's own API; what the host saw (a result, or what it raised)."""
    seen = []
    for _, name, arguments in CALLS:
        try:
            result = await call(name, arguments)
            seen.append("error" if getattr(result, "is_error", getattr(result, "isError", False)) else "result")
        except Exception as exc:  # the framework's own choice (pydantic-ai raises ModelRetry)
            seen.append(type(exc).__name__)
    return seen


async def openai_agents(target: Any) -> list[str]:
    from agents.mcp import MCPServerStdio, MCPServerStreamableHttp

    server = (
        MCPServerStreamableHttp(params={"url": target})
        if isinstance(target, str)
        else MCPServerStdio(params={"command": target.command, "args": target.args, "env": target.env})
    )
    async with server:
        return await _each(server.call_tool)


async def pydantic_ai(target: Any) -> list[str]:
    import fastmcp
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    stdio = None if isinstance(target, str) else StdioTransport(target.command, target.args, env=target.env)
    toolset = MCPToolset(target if stdio is None else fastmcp.Client(stdio))
    async with toolset:
        return await _each(toolset.direct_call_tool)


async def llama_index(target: Any) -> list[str]:
    from llama_index.tools.mcp import BasicMCPClient

    client = (
        BasicMCPClient(target)
        if isinstance(target, str)
        else BasicMCPClient(target.command, args=target.args, env=target.env)
    )
    return await _each(client.call_tool)  # a new session per call


async def fastmcp_client(target: Any) -> list[str]:
    import fastmcp
    from fastmcp.client.transports import StdioTransport

    transport = target if isinstance(target, str) else StdioTransport(target.command, target.args, env=target.env)
    async with fastmcp.Client(transport) as client:
        return await _each(lambda name, args: client.call_tool(name, args, raise_on_error=False))


FRAMEWORKS = {
    "openai-agents": openai_agents,
    "pydantic-ai": pydantic_ai,
    "llama-index": llama_index,
    "fastmcp.Client": fastmcp_client,
}


def _server(kind: str) -> Any:
    if kind == "fastmcp":
        from fastmcp_shop import create_server

        return create_server()
    from shop import create_server

    return create_server()


def _verdict(attrs: Any) -> tuple[Any, Any]:
    return attrs[S.OUTCOME], attrs.get(S.FAILURE_BOUNDARY)


def _record(framework: str, server: str, transport: str, client: list[Any], served: list[Any]) -> None:
    if TABLES is not None:
        with TABLES.open("a") as f:
            row = {
                "framework": framework,
                "server": server,
                "transport": transport,
                "client": client,
                "server_side": served,
            }
            f.write(json.dumps(row) + "\n")


@pytest.mark.parametrize("server_kind", ["mcpserver", "fastmcp"])
@pytest.mark.parametrize("framework", list(FRAMEWORKS))
async def test_a_framework_over_http_agrees_with_the_server(mcpobs_telemetry, framework, server_kind):
    server = _server(server_kind)
    app = server.http_app() if server_kind == "fastmcp" else server.streamable_http_app()
    with serve_http(app) as base:
        port = int(base.rsplit(":", 1)[1])
        await FRAMEWORKS[framework](base + "/mcp")
    calls = sorted(
        (s for s in mcpobs_telemetry.spans() if s.kind is SpanKind.CLIENT and s.name.startswith("tools/call")),
        key=lambda s: s.start_time,
    )
    assert len(calls) == len(CALLS)  # one CLIENT span per call: the framework's own spans are not doubled
    where = {
        S.SERVER_ADDRESS: "127.0.0.1",
        S.SERVER_PORT: port,
        S.NETWORK_TRANSPORT: "tcp",
        S.NETWORK_PROTOCOL_NAME: "http",
        S.NETWORK_PROTOCOL_VERSION: "1.1",
        S.MCP_METHOD_NAME: "tools/call",
    }
    for span in calls:
        assert {k: span.attributes.get(k) for k in where} == where, span.name
        assert span.attributes.get(S.MCP_PROTOCOL_VERSION), span.name
    served = {
        s.parent.span_id: s
        for s in mcpobs_telemetry.spans()
        if s.kind is SpanKind.SERVER and s.name.startswith("tools/call") and s.parent is not None
    }
    pairs = [(c, served.get(c.context.span_id)) for c in calls]
    assert all(s is not None for _, s in pairs), "each server span is its client span's child"
    # named alike on both sides (llama-index's session per call too: what an earlier session listed names it)
    assert [c.name for c, _ in pairs] == [s.name for _, s in pairs if s is not None]
    client_table = [_verdict(c.attributes) for c, _ in pairs]
    server_table = [_verdict(s.attributes) for _, s in pairs if s is not None]
    _record(framework, server_kind, "http", client_table, server_table)
    assert server_table == EXPECTED
    assert client_table == server_table


STDIO = ["openai-agents", "pydantic-ai", "llama-index", "fastmcp.Client"]
"""Each offers stdio (pydantic-ai through the `fastmcp.Client` it is given)."""


@pytest.mark.parametrize("server_kind", ["mcpserver", "fastmcp"])
@pytest.mark.parametrize("framework", STDIO)
async def test_a_framework_over_stdio_agrees_with_the_server(mcpobs_telemetry, framework, server_kind, tmp_path: Path):
    spans_file = tmp_path / "spans.jsonl"
    env = {"MCPOBS_TEST_SERVER": "fastmcp"} if server_kind == "fastmcp" else None
    await FRAMEWORKS[framework](stdio_params(spans_file, env=env))
    calls = sorted(
        (s for s in mcpobs_telemetry.spans() if s.kind is SpanKind.CLIENT and s.name.startswith("tools/call")),
        key=lambda s: s.start_time,
    )
    assert len(calls) == len(CALLS)
    for span in calls:
        assert span.attributes.get(S.NETWORK_TRANSPORT) == "pipe", span.name
        assert span.attributes.get(S.MCP_PROTOCOL_VERSION), span.name
    served = {
        s["parent_id"]: s
        for s in read_spans(spans_file)
        if s["kind"] == "SERVER" and s["name"].startswith("tools/call")
    }
    pairs = [(c, served.get(f"{c.context.span_id:016x}")) for c in calls]
    assert all(s is not None for _, s in pairs), "each server span is its client span's child"
    assert [c.name for c, _ in pairs] == [s["name"] for _, s in pairs if s is not None]
    client_table = [_verdict(c.attributes) for c, _ in pairs]
    server_table = [_verdict(s["attributes"]) for _, s in pairs if s is not None]
    _record(framework, server_kind, "stdio", client_table, server_table)
    assert server_table == EXPECTED
    assert client_table == server_table


async def test_llama_index_on_a_silent_server_judges_from_what_its_earlier_sessions_listed():
    """A session per call, and a server that sends no verdict: the listing the first (ok) call's
    session made (the SDK lists to validate its result) names and judges the later sessions' calls."""
    import mcpobs
    from mcpobs.testing import capture

    captured = capture(send_verdict=False)
    try:
        server = _server("mcpserver")
        with serve_http(server.streamable_http_app()) as base:
            await llama_index(base + "/mcp")
        calls = sorted(
            (s for s in captured.spans() if s.kind is SpanKind.CLIENT and s.name.startswith("tools/call")),
            key=lambda s: s.start_time,
        )
        said = [(s.name, *_verdict(s.attributes), s.attributes.get(S.OUTCOME_SOURCE)) for s in calls]
    finally:
        mcpobs.uninstrument()
    assert said == [
        ("tools/call get_order_status", "ok", None, None),
        ("tools/call get_order_status", "tool_error", "handler", None),
        ("tools/call quote_refund", "tool_error", "handler", None),  # a crash the server hides
        ("tools/call", "client_error", "discovery", "listing"),
        ("tools/call quote_refund", "client_error", "arguments", "listing"),
    ]


# -- what the host sees: the same with and without mcpobs on either side -------------------------


def _serialized(result: Any) -> str:
    """What the framework handed its host, as JSON: every field, and which were set."""
    return json.dumps(
        {
            "all": result.model_dump(mode="json", by_alias=True),
            "set": result.model_dump(mode="json", by_alias=True, exclude_unset=True),
        }
    )


async def _returned(framework: str, target: Any) -> list[str]:
    """The objects the framework's own call returns for each call, serialized."""
    seen: list[str] = []

    async def keep(call: Call) -> list[str]:
        for _, name, arguments in CALLS:
            seen.append(_serialized(await call(name, arguments)))
        return []

    if framework == "openai-agents":
        from agents.mcp import MCPServerStdio, MCPServerStreamableHttp

        server = (
            MCPServerStreamableHttp(params={"url": target})
            if isinstance(target, str)
            else MCPServerStdio(params={"command": target.command, "args": target.args, "env": target.env})
        )
        async with server:
            await keep(server.call_tool)
    else:
        from llama_index.tools.mcp import BasicMCPClient

        client = (
            BasicMCPClient(target)
            if isinstance(target, str)
            else BasicMCPClient(target.command, args=target.args, env=target.env)
        )
        await keep(client.call_tool)
    return seen


def _mcpobs(options: dict[str, Any] | None) -> Any:
    """`instrument(**options)` into in-memory exporters (None: mcpobs off); undone by `uninstrument()`."""
    import mcpobs
    from mcpobs.testing import capture

    mcpobs.uninstrument()
    return capture(**options) if options is not None else None


RETURNING = ["openai-agents", "llama-index"]
"""Frameworks whose call returns the SDK's `CallToolResult` whole to the host (and its model)."""


@pytest.mark.parametrize("framework", RETURNING)
async def test_a_framework_returns_the_same_result_over_http_with_mcpobs_on_neither_the_server_or_both(framework):
    import mcpobs

    seen: dict[str, list[str]] = {}
    try:
        for side, options in {"neither": None, "server only": {"clients": False}, "both": {}}.items():
            _mcpobs(options)
            with serve_http(_server("mcpserver").streamable_http_app()) as base:
                seen[side] = await _returned(framework, base + "/mcp")
            mcpobs.uninstrument()
    finally:
        mcpobs.uninstrument()
    for side in ("server only", "both"):
        for (label, _, _), got, want in zip(CALLS, seen[side], seen["neither"], strict=True):
            assert got == want, f"{framework}, mcpobs on {side}, {label}:\n{got}\nwithout mcpobs:\n{want}"


@pytest.mark.parametrize("framework", RETURNING)
async def test_a_framework_returns_the_same_result_over_stdio_whichever_side_runs_mcpobs(framework, tmp_path: Path):
    """The server in its own process, with mcpobs or without (MCPOBS_TEST_PLAIN); the framework's
    process with mcpobs or without."""
    import mcpobs

    seen: dict[tuple[bool, bool], list[str]] = {}
    try:
        for server_has in (False, True):
            for client_has in (False, True):
                telemetry = _mcpobs({} if client_has else None)
                env = None if server_has else {"MCPOBS_TEST_PLAIN": "1"}
                spans_file = tmp_path / f"spans-{server_has}-{client_has}.jsonl"
                seen[(server_has, client_has)] = await _returned(framework, stdio_params(spans_file, env=env))
                if server_has and client_has:  # the client still took the server's verdict
                    calls = sorted(
                        (s for s in telemetry.spans() if s.kind is SpanKind.CLIENT and s.name.startswith("tools/call")),
                        key=lambda s: s.start_time,
                    )
                    assert [_verdict(s.attributes) for s in calls] == EXPECTED
                mcpobs.uninstrument()
    finally:
        mcpobs.uninstrument()
    want = seen[(False, False)]
    assert all('"isError": true' in r for r in want[1:])  # the failures did fail
    for (server_has, client_has), got in seen.items():
        for (label, _, _), one, other in zip(CALLS, got, want, strict=True):
            assert one == other, f"{framework}, server mcpobs {server_has}, client mcpobs {client_has}, {label}"
