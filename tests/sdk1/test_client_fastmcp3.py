"""FastMCP 3.4's `fastmcp.Client` on mcp 1.x: one CLIENT span per call, its connection, its session's life.

FastMCP 3 opens a CLIENT span of its own around each call on the global tracer provider, with no
switch to turn it off; mcpobs makes that one a no-op, so with a global provider set each call still
has exactly one CLIENT span, mcpobs's, whose context the request carries.
"""

from __future__ import annotations

from typing import Any

import fastmcp
import pytest
from clients import client_spans, outcome_of, recording_headers, serve_http, shop, stdio1, traceparent_of
from fastmcp.client.transports import StdioTransport
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio


@pytest.fixture
def spans(mcpobs_telemetry, monkeypatch):
    """mcpobs's capture, also as the global tracer provider: where FastMCP 3 opens its own spans."""
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", mcpobs_telemetry.tracer_provider)
    return mcpobs_telemetry


def fastmcp3_shop() -> Any:
    """The shop's two tools as a FastMCP 3 server."""
    server = fastmcp.FastMCP("fastshop3")

    @server.tool
    def get_order_status(order_id: str) -> dict[str, str]:
        """Look up one order's status."""
        if order_id != "O-1873":
            raise fastmcp.exceptions.ToolError(f"Unknown order {order_id}")
        return {"order_id": order_id, "status": "delivered"}

    return server


async def _calls(client: Any) -> list[bool]:
    await client.list_tools()
    return [
        (await client.call_tool("get_order_status", {"order_id": order}, raise_on_error=False)).is_error
        for order in ("O-1873", "O-0")
    ]


@pytest.mark.parametrize("server", ["fastmcp3", "fastmcp1"])
async def test_in_memory_each_call_has_one_client_span(spans, server):
    target = fastmcp3_shop() if server == "fastmcp3" else shop()
    async with fastmcp.Client(target) as client:
        assert await _calls(client) == [False, True]
    calls = client_spans(spans, "tools/call get_order_status")
    assert [outcome_of(c.attributes) for c in calls] == [("ok", None), ("tool_error", "handler")]
    assert not [s for s in spans.spans() if s.kind is SpanKind.CLIENT and S.OUTCOME not in s.attributes]
    assert all(S.NETWORK_TRANSPORT not in c.attributes for c in calls)
    (life,) = spans.points(S.CLIENT_SESSION_DURATION.name)
    assert life.attributes[S.MCP_PROTOCOL_VERSION] == "2025-11-25"


async def test_over_http_it_has_connection_labels_a_trace_header_and_a_session_duration(spans):
    posts: list[dict[str, str]] = []
    with serve_http(recording_headers(shop().streamable_http_app(), posts)) as base:
        async with fastmcp.Client(base + "/mcp") as client:
            assert await _calls(client) == [False, True]
    calls = client_spans(spans, "tools/call get_order_status")
    assert len(calls) == 2
    assert len([s for s in spans.spans() if s.kind is SpanKind.CLIENT and s.name.startswith("tools/call")]) == 2
    for call in calls:
        a = call.attributes
        assert (a[S.NETWORK_TRANSPORT], a[S.NETWORK_PROTOCOL_VERSION], a[S.SERVER_ADDRESS]) == (
            "tcp",
            "1.1",
            "127.0.0.1",
        )
        assert a[S.MCP_SESSION_ID]  # the legacy HTTP session's id (a span attribute, never a label)
    sent = {p.get("traceparent") for p in posts if p[":method"] == "POST"}
    assert {traceparent_of(c) for c in calls} <= sent
    (life,) = spans.points(S.CLIENT_SESSION_DURATION.name)
    assert life.attributes[S.NETWORK_TRANSPORT] == "tcp"
    assert life.attributes[S.SERVER_ADDRESS] == "127.0.0.1"


async def test_over_stdio_its_spans_and_session_say_pipe(spans):
    params = stdio1()
    transport = StdioTransport(params.command, params.args, env=params.env)  # keeps its session alive
    async with fastmcp.Client(transport) as client:
        assert await _calls(client) == [False, True]
    calls = client_spans(spans, "tools/call get_order_status")
    assert [c.attributes[S.NETWORK_TRANSPORT] for c in calls] == ["pipe", "pipe"]
    assert spans.points(S.CLIENT_SESSION_DURATION.name) == []  # the session outlives the `Client` block
    await transport.close()
    (life,) = spans.points(S.CLIENT_SESSION_DURATION.name)
    assert life.attributes[S.NETWORK_TRANSPORT] == "pipe"


async def test_uninstrumented_fastmcp_keeps_its_own_client_spans(spans):
    """The no-op is mcpobs's change, and `uninstrument()` takes it back."""
    import mcpobs

    mcpobs.uninstrument()
    async with fastmcp.Client(fastmcp3_shop()) as client:
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
    own = [s for s in spans.spans() if s.kind is SpanKind.CLIENT]
    assert [s.name for s in own] == ["tools/call get_order_status"]
    assert S.OUTCOME not in own[0].attributes  # FastMCP's span, not mcpobs's
