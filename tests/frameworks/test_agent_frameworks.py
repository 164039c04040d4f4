"""Agent frameworks as MCP clients, each calling tools through its own API (no model), against an
instrumented `MCPServer` and an instrumented FastMCP server, over Streamable HTTP and over stdio.

Each call is one CLIENT span with the connection's attributes, the server's span its child, and
the client's (outcome, boundary) equal to the server's for ok, a `ToolError`, a crash, an
unknown tool and bad arguments (`agreement.py`); and the host holds the same ok result with
and without mcpobs. Run by scripts/test-frameworks in its own venv (pinned there); google-adk,
which pins an older OpenTelemetry, is in test_google_adk.py, in a venv of its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from agreement import (
    CALLS,
    EXPECTED,
    SERVERS,
    Adapter,
    host_views,
    http_table,
    listed_as,
    outcomes,
    serialized,
    stdio_table,
)
from opentelemetry.trace import SpanKind
from transports import serve_http, stdio_params

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

Calls = list[tuple[str, dict[str, Any]]]


async def _each(call: Any, calls: Calls) -> list[Any]:
    """Every call through the framework's own API; what the host saw (a result, or what it raised)."""
    seen: list[Any] = []
    for name, arguments in calls:
        try:
            seen.append(await call(name, arguments))
        except Exception as exc:  # the framework's own choice (pydantic-ai raises ModelRetry)
            seen.append(exc)
    return seen


async def openai_agents(target: Any, calls: Calls) -> list[Any]:
    from agents.mcp import MCPServerStdio, MCPServerStreamableHttp

    server = (
        MCPServerStreamableHttp(params={"url": target})
        if isinstance(target, str)
        else MCPServerStdio(params={"command": target.command, "args": target.args, "env": target.env})
    )
    async with server:
        return await _each(server.call_tool, calls)


async def pydantic_ai(target: Any, calls: Calls) -> list[Any]:
    import fastmcp
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    stdio = None if isinstance(target, str) else StdioTransport(target.command, target.args, env=target.env)
    toolset = MCPToolset(target if stdio is None else fastmcp.Client(stdio))
    async with toolset:
        return await _each(toolset.direct_call_tool, calls)


async def llama_index(target: Any, calls: Calls) -> list[Any]:
    from llama_index.tools.mcp import BasicMCPClient

    client = (
        BasicMCPClient(target)
        if isinstance(target, str)
        else BasicMCPClient(target.command, args=target.args, env=target.env)
    )
    return await _each(client.call_tool, calls)  # a new session per call


async def fastmcp_client(target: Any, calls: Calls) -> list[Any]:
    import fastmcp
    from fastmcp.client.transports import StdioTransport

    transport = target if isinstance(target, str) else StdioTransport(target.command, target.args, env=target.env)
    async with fastmcp.Client(transport) as client:
        return await _each(lambda name, args: client.call_tool(name, args, raise_on_error=False), calls)


async def agno(target: Any, calls: Calls) -> list[Any]:
    """`MCPTools`, the toolkit an agno `Agent` is given; its functions' entrypoints are what the agent calls.

    An unknown name is called through agno's own entrypoint for a tool built from a stale listing
    entry (`agno.utils.mcp.get_entrypoint_for_tool`, which `MCPTools` uses for every listed tool).
    """
    from agno.tools.mcp import MCPTools
    from agno.utils.mcp import get_entrypoint_for_tool

    toolkit = (
        MCPTools(url=target, transport="streamable-http")
        if isinstance(target, str)
        else MCPTools(server_params=target, transport="stdio")
    )
    async with toolkit:
        listed = {t.name: t for t in (await toolkit.session.list_tools())}

        async def call(name: str, arguments: dict[str, Any]) -> Any:
            function = toolkit.functions.get(name)
            if function is not None:
                return await function.entrypoint(**arguments)
            stale = listed_as(listed, name).model_copy(update={"name": name})
            return await get_entrypoint_for_tool(stale, toolkit.session, toolkit)(**arguments)

        return await _each(call, calls)


async def dspy_tools(target: Any, calls: Calls) -> list[Any]:
    """`dspy.Tool.from_mcp_tool` on the host's own MCP client, as dspy's MCP tutorial builds a ReAct agent's tools.

    Over HTTP on an `mcp.Client`, over stdio on a bare `ClientSession` (the tutorial's, on
    `stdio_client`). dspy checks arguments against the listed schema itself: bad arguments
    are refused before anything is sent.
    """
    import dspy
    from mcp import Client, ClientSession
    from mcp.client.stdio import stdio_client

    async def run(client: Any) -> list[Any]:
        listed = {t.name: t for t in (await client.list_tools()).tools}

        async def call(name: str, arguments: dict[str, Any]) -> Any:
            tool = listed_as(listed, name).model_copy(update={"name": name})
            return await dspy.Tool.from_mcp_tool(client, tool).acall(**arguments)

        return await _each(call, calls)

    if isinstance(target, str):
        async with Client(target) as client:
            return await run(client)
    async with stdio_client(target) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await run(session)


async def haystack(target: Any, calls: Calls) -> list[Any]:
    """mcp-haystack's `MCPToolset`, the tools a Haystack `Agent` is given, invoked as its `ToolInvoker` does.

    Its tools are synchronous (the session lives on mcp-haystack's own event loop thread), so
    they are invoked in a worker thread. An unknown name is `MCPTool(name, ...)`, which looks the
    name up on the server and refuses to build the tool: nothing is called.
    """
    from haystack_integrations.tools.mcp import MCPTool, MCPToolset, StdioServerInfo, StreamableHttpServerInfo

    info = (
        StreamableHttpServerInfo(url=target)
        if isinstance(target, str)
        else StdioServerInfo(command=target.command, args=target.args, env=target.env)
    )
    toolset = MCPToolset(server_info=info)
    try:
        await anyio.to_thread.run_sync(toolset.warm_up)
        tools = {t.name: t for t in toolset}

        async def call(name: str, arguments: dict[str, Any]) -> Any:
            if name in tools:
                return await anyio.to_thread.run_sync(lambda: tools[name].invoke(**arguments))
            return await anyio.to_thread.run_sync(lambda: MCPTool(name=name, server_info=info, eager_connect=True))

        return await _each(call, calls)
    finally:
        await anyio.to_thread.run_sync(toolset.close)


FRAMEWORKS: dict[str, Adapter] = {
    "openai-agents": openai_agents,
    "pydantic-ai": pydantic_ai,
    "llama-index": llama_index,
    "fastmcp.Client": fastmcp_client,
    "agno": agno,
    "dspy": dspy_tools,
    "mcp-haystack": haystack,
}
REFUSES = {"dspy": ("bad arguments", "ValueError"), "mcp-haystack": ("unknown tool", "MCPConnectionError")}
"""The call a framework refuses itself, sending nothing, and what it raises (its own check, as its docs say)."""


def _refused(framework: str, seen: list[Any]) -> set[str]:
    """The labels `framework` refuses; each refused call raised the framework's own exception."""
    if framework not in REFUSES:
        return set()
    label, raised = REFUSES[framework]
    assert outcomes(seen)[[c[0] for c in CALLS].index(label)] == raised
    return {label}


@pytest.mark.parametrize("server_kind", SERVERS)
@pytest.mark.parametrize("framework", list(FRAMEWORKS))
async def test_a_framework_over_http_agrees_with_the_server(mcpobs_telemetry, framework, server_kind):
    refuses = {REFUSES[framework][0]} if framework in REFUSES else set()
    seen = await http_table(mcpobs_telemetry, framework, FRAMEWORKS[framework], server_kind, refuses)
    assert _refused(framework, seen) == refuses


@pytest.mark.parametrize("server_kind", SERVERS)
@pytest.mark.parametrize("framework", list(FRAMEWORKS))
async def test_a_framework_over_stdio_agrees_with_the_server(mcpobs_telemetry, framework, server_kind, tmp_path: Path):
    refuses = {REFUSES[framework][0]} if framework in REFUSES else set()
    seen = await stdio_table(mcpobs_telemetry, framework, FRAMEWORKS[framework], server_kind, tmp_path, refuses)
    assert _refused(framework, seen) == refuses


@pytest.mark.parametrize("framework", list(FRAMEWORKS))
async def test_the_host_holds_the_same_results_whichever_side_runs_mcpobs(framework):
    """Over HTTP, the server in process (what the host holds does not depend on the transport it came
    over): the failed calls too, where a server's verdict would show."""
    views = await host_views(FRAMEWORKS[framework], "mcpserver")
    for side in ("server only", "both"):
        for (label, _, _), got, want in zip(CALLS, views[side], views["neither"], strict=True):
            assert got == want, f"mcpobs on {side}, {label}: {got} without mcpobs: {want}"


def _mcpserver() -> Any:
    from shop import create_server

    return create_server()


async def test_llama_index_on_a_silent_server_judges_from_what_its_earlier_sessions_listed():
    """A session per call, and a server that sends no verdict: the listing the first (ok) call's
    session made (the SDK lists to validate its result) names and judges the later sessions' calls."""
    import mcpobs
    from mcpobs.testing import capture

    captured = capture(send_verdict=False)
    try:
        with serve_http(_mcpserver().streamable_http_app()) as base:
            await llama_index(base + "/mcp", [(name, args) for _, name, args in CALLS])
        calls = sorted(
            (s for s in captured.spans() if s.kind is SpanKind.CLIENT and s.name.startswith("tools/call")),
            key=lambda s: s.start_time,
        )
        said = [(s.name, s.attributes[S.OUTCOME], s.attributes.get(S.FAILURE_BOUNDARY)) for s in calls]
        sources = [s.attributes.get(S.OUTCOME_SOURCE) for s in calls]
    finally:
        mcpobs.uninstrument()
    assert said == [
        ("tools/call get_order_status", "ok", None),
        ("tools/call get_order_status", "tool_error", "handler"),
        ("tools/call quote_refund", "tool_error", "handler"),  # a crash the server hides
        ("tools/call", "client_error", "discovery"),
        ("tools/call quote_refund", "client_error", "arguments"),
    ]
    assert sources == [None, None, None, "listing", "listing"]


# -- what the host sees: the same with and without mcpobs on either side -------------------------


async def _returned(framework: str, target: Any) -> list[str]:
    """The objects the framework's own call returns for each call, serialized."""
    seen = await FRAMEWORKS[framework](target, [(name, arguments) for _, name, arguments in CALLS])
    return [json.dumps(serialized(each)) for each in seen]


def _mcpobs(options: dict[str, Any] | None) -> Any:
    """`instrument(**options)` into in-memory exporters (None: mcpobs off); undone by `uninstrument()`."""
    import mcpobs
    from mcpobs.testing import capture

    mcpobs.uninstrument()
    return capture(**options) if options is not None else None


RETURNING = ["openai-agents", "llama-index"]
"""Frameworks whose call returns the SDK's `CallToolResult` whole to the host (and its model)."""


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
                    assert [(s.attributes[S.OUTCOME], s.attributes.get(S.FAILURE_BOUNDARY)) for s in calls] == [
                        EXPECTED[label] for label, _, _ in CALLS
                    ]
                mcpobs.uninstrument()
    finally:
        mcpobs.uninstrument()
    want = seen[(False, False)]
    assert all('"isError": true' in r for r in want[1:])  # the failures did fail
    for (server_has, client_has), got in seen.items():
        for (label, _, _), one, other in zip(CALLS, got, want, strict=True):
            assert one == other, f"{framework}, server mcpobs {server_has}, client mcpobs {client_has}, {label}"
