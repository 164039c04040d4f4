"""A server built before `instrument()` is adopted the first time it serves a connection."""

from __future__ import annotations

from contextlib import ExitStack

import pytest
from mcp.server._otel import OpenTelemetryMiddleware
from opentelemetry.trace import SpanKind
from shop import create_server
from transports import client_for, eventually, serve_http

import mcpobs
from mcpobs import semconv as S
from mcpobs._server.middleware import ServerMiddleware
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio


def _tool_calls(telemetry) -> list:
    return [
        s
        for s in telemetry.spans()
        if s.kind == SpanKind.SERVER and s.attributes.get(S.MCP_METHOD_NAME) == "tools/call"
    ]


@pytest.mark.parametrize("transport", ["auto", "legacy", "http"])
async def test_a_server_built_before_instrument_is_adopted(transport):
    mcpobs.uninstrument()
    server = create_server()  # still carries the SDK's own span middleware
    assert any(isinstance(m, OpenTelemetryMiddleware) for m in server.middleware)
    telemetry = capture()
    try:
        with ExitStack() as stack:
            base_url = stack.enter_context(serve_http(server.streamable_http_app())) if transport == "http" else None
            async with client_for(transport, server, base_url) as client:
                await client.call_tool("get_order_status", {"order_id": "O-1873"})
                await client.call_tool("get_order_status", {"order_id": "nope"})
            spans = await eventually(lambda: s if len(s := _tool_calls(telemetry)) == 2 else None)
        # mcpobs's middleware took the SDK's place, and knows the server's registered tools at once.
        assert not any(isinstance(m, OpenTelemetryMiddleware) for m in server.middleware)
        assert sum(isinstance(m, ServerMiddleware) for m in server.middleware) == 1
        assert [s.name for s in spans] == ["tools/call get_order_status"] * 2
        assert [s.attributes[S.OUTCOME] for s in spans] == ["ok", "tool_error"]
        assert telemetry.total(S.SERVER_REQUESTS.name, {S.MCP_METHOD_NAME: "tools/call"}) == 2
    finally:
        mcpobs.uninstrument()
        telemetry.tracer_provider.shutdown()
        telemetry.meter_provider.shutdown()
    # Uninstrumenting gives the adopted server its own middleware back.
    assert any(isinstance(m, OpenTelemetryMiddleware) for m in server.middleware)
    assert not any(isinstance(m, ServerMiddleware) for m in server.middleware)
