"""google-adk as an MCP client: its `McpToolset`'s tools, run as its agents run them (no model).

google-adk caps OpenTelemetry (2.13: at 1.44; 2.15: at 1.45.2), so this runs in a venv of its own
(scripts/test-frameworks, MCPOBS_FRAMEWORKS=adk), unpinned, with the OpenTelemetry releases pip
resolves beside it: mcpobs on what google-adk allows.

Each call runs inside ADK's own `execute_tool` span (`record_tool_execution`, what its flow opens
around a tool), and ADK puts that span's context into the request's `_meta` itself: the CLIENT
span mcpobs opens is that span's child, and the server's span is the CLIENT span's child.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

import pytest
from agreement import CALLS, SERVERS, host_views, http_table, listed_as, stdio_table
from opentelemetry.trace import SpanKind

pytestmark = pytest.mark.anyio

Calls = list[tuple[str, dict[str, Any]]]


async def google_adk(target: Any, calls: Calls) -> list[Any]:
    """`McpToolset(...).get_tools()`, each tool's `run_async` with a `ToolContext`, inside `execute_tool`.

    An unknown name is an `McpTool` built from a stale listing entry on the toolset's own
    session manager (as `get_tools` builds each tool).
    """
    from google.adk.agents import LlmAgent
    from google.adk.agents.invocation_context import InvocationContext
    from google.adk.sessions import InMemorySessionService
    from google.adk.telemetry._instrumentation import record_tool_execution
    from google.adk.tools.mcp_tool import McpToolset, StdioConnectionParams, StreamableHTTPConnectionParams
    from google.adk.tools.mcp_tool.mcp_tool import McpTool
    from google.adk.tools.tool_context import ToolContext

    params = (
        StreamableHTTPConnectionParams(url=target)
        if isinstance(target, str)
        else StdioConnectionParams(server_params=target, timeout=30)
    )
    toolset = McpToolset(connection_params=params)
    sessions = InMemorySessionService()
    agent = LlmAgent(name="clerk", model="gemini-2.5-flash", tools=[toolset])  # never asked: no model runs
    context = InvocationContext(
        session_service=sessions,
        invocation_id="e-1",
        agent=agent,
        session=await sessions.create_session(app_name="shop", user_id="u"),
    )
    seen: list[Any] = []
    try:
        tools = {t.name: t for t in await toolset.get_tools()}
        listed = {name: tool._mcp_tool for name, tool in tools.items()}  # pyright: ignore[reportPrivateUsage]
        for index, (name, arguments) in enumerate(calls):
            tool = tools.get(name) or McpTool(
                mcp_tool=listed_as(listed, name).model_copy(update={"name": name}),
                mcp_session_manager=toolset._mcp_session_manager,  # pyright: ignore[reportPrivateUsage]
            )
            try:
                async with record_tool_execution(tool, agent, arguments, context):
                    tool_context = ToolContext(context, function_call_id=f"call-{index}")
                    seen.append(await tool.run_async(args=arguments, tool_context=tool_context))
            except Exception as exc:
                seen.append(exc)
    finally:
        await toolset.close()
    return seen


@pytest.fixture
def adk_spans(mcpobs_telemetry, monkeypatch):
    """ADK's own spans (`execute_tool`) recorded beside mcpobs's, as with one provider in a host."""
    from google.adk.telemetry import tracing

    monkeypatch.setattr(tracing, "tracer", mcpobs_telemetry.tracer_provider.get_tracer("gcp.vertex.agent"))
    return mcpobs_telemetry


def _each_call_is_a_child_of_adks_execute_tool_span(telemetry: Any) -> None:
    spans = telemetry.spans()
    executed = {s.context.span_id: s for s in spans if s.name.startswith("execute_tool ")}
    calls = [s for s in spans if s.kind is SpanKind.CLIENT and s.name.startswith("tools/call")]
    assert calls and len(executed) == 5
    for call in calls:
        assert call.parent is not None and call.parent.span_id in executed, call.name


def test_this_venv_has_the_opentelemetry_google_adk_allows():
    """The point of its own venv: pip resolved mcpobs beside google-adk's newest release (not walked
    back to the 1.x line, issue 55), with the OpenTelemetry releases google-adk itself declares."""
    from packaging.requirements import Requirement
    from packaging.version import Version

    assert Version(importlib.metadata.version("google-adk")) >= Version("2.13.0")
    declared = [Requirement(r) for r in importlib.metadata.requires("google-adk") or []]
    otel = [r for r in declared if r.name.startswith("opentelemetry-") and not r.marker]
    assert otel, "google-adk declares no OpenTelemetry requirement: this venv has no reason to exist"
    for requirement in otel:
        installed = importlib.metadata.version(requirement.name)
        assert requirement.specifier.contains(installed, prereleases=True), (requirement, installed)


@pytest.mark.parametrize("server_kind", SERVERS)
async def test_google_adk_over_http_agrees_with_the_server(adk_spans, server_kind):
    await http_table(adk_spans, "google-adk", google_adk, server_kind)
    _each_call_is_a_child_of_adks_execute_tool_span(adk_spans)


@pytest.mark.parametrize("server_kind", SERVERS)
async def test_google_adk_over_stdio_agrees_with_the_server(adk_spans, server_kind, tmp_path: Path):
    await stdio_table(adk_spans, "google-adk", google_adk, server_kind, tmp_path)
    _each_call_is_a_child_of_adks_execute_tool_span(adk_spans)


async def test_google_adk_holds_the_same_results_whichever_side_runs_mcpobs():
    """What ADK hands its flow (the function response its model reads), the failed calls too."""
    views = await host_views(google_adk, "mcpserver")
    for side in ("server only", "both"):
        for (label, _, _), got, want in zip(CALLS, views[side], views["neither"], strict=True):
            assert got == want, f"mcpobs on {side}, {label}: {got} without mcpobs: {want}"
