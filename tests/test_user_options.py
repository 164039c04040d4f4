"""What users of contrib instrumentations expect: their own hooks, excluded methods, one server by hand."""

from __future__ import annotations

import logging

import pytest
from mcp.server._otel import OpenTelemetryMiddleware
from opentelemetry.trace import SpanKind
from shop import create_server
from transports import TRANSPORTS, client_spans, run_calls, server_spans

import mcpobs
from mcpobs import semconv as S
from mcpobs._core import guard as _guard
from mcpobs._server.middleware import ServerMiddleware
from mcpobs.testing import CapturedTelemetry, capture

pytestmark = pytest.mark.anyio

CALL = "tools/call get_order_status"


async def _order(client) -> None:
    assert not (await client.call_tool("get_order_status", {"order_id": "O-1873"})).is_error
    await client.list_tools()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_request_and_response_hooks_add_the_users_attributes(transport):
    seen = []

    def server_request(span, request):
        span.set_attribute("shop.tenant", "acme")
        seen.append(("server request", request.method))

    def server_response(span, result):
        span.set_attribute("shop.answered", True)
        seen.append(("server response", type(result).__name__))

    def client_request(span, request):
        span.set_attribute("shop.feature", "beta")
        seen.append(("client request", request.method))

    def client_response(span, result):
        span.set_attribute("shop.got", type(result).__name__)

    telemetry = capture(
        server_request_hook=server_request,
        server_response_hook=server_response,
        client_request_hook=client_request,
        client_response_hook=client_response,
    )
    try:
        await run_calls(transport, _order)
    finally:
        mcpobs.uninstrument()
    (server,) = server_spans(telemetry, CALL)
    assert server.attributes["shop.tenant"] == "acme" and server.attributes["shop.answered"] is True
    assert server.attributes[S.OUTCOME] == "ok"  # mcpobs's own attributes are still there
    (client,) = client_spans(telemetry, CALL)
    assert client.attributes["shop.feature"] == "beta"
    assert client.attributes["shop.got"] == "CallToolResult"
    assert ("server request", "tools/call") in seen and ("client request", "tools/call") in seen
    assert ("server response", "dict") in seen or ("server response", "CallToolResult") in seen
    for span in telemetry.spans():  # every span of ours went through the hooks
        if span.kind in (SpanKind.SERVER, SpanKind.CLIENT) and span.attributes.get(S.MCP_METHOD_NAME):
            assert ("shop.tenant" if span.kind is SpanKind.SERVER else "shop.feature") in span.attributes, span.name


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_hook_that_raises_is_logged_once_and_never_reaches_the_call(transport, caplog):
    def broken(span, value):
        raise RuntimeError("the user's hook broke")

    _guard._seen.clear()  # "once" is per process: start this test's count afresh
    telemetry = capture(server_request_hook=broken, client_response_hook=broken)
    try:
        with caplog.at_level(logging.WARNING, logger="mcpobs"):

            async def calls(client):
                for _ in range(3):
                    await _order(client)

            await run_calls(transport, calls)
    finally:
        mcpobs.uninstrument()
    assert len(server_spans(telemetry, CALL)) == 3 and len(client_spans(telemetry, CALL)) == 3
    for name in ("server_request_hook", "client_response_hook"):
        warned = [r for r in caplog.records if r.levelno == logging.WARNING and name in r.getMessage()]
        assert len(warned) == 1, [r.getMessage() for r in caplog.records]


@pytest.mark.parametrize("how", ["option", "environment"])
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_excluded_methods_get_no_span_but_keep_their_metric(transport, how, monkeypatch):
    if how == "environment":
        monkeypatch.setenv("OTEL_PYTHON_MCP_EXCLUDED_METHODS", "tools/list, ping")
        telemetry = capture()
    else:
        telemetry = capture(excluded_methods=["tools/list", "ping"])
    try:

        async def calls(client):
            await _order(client)
            if transport == "legacy":  # ping is gone at 2026-07-28
                await client.send_ping()

        await run_calls(transport, calls)
    finally:
        mcpobs.uninstrument()
    names = {s.name for s in telemetry.spans()}
    assert "tools/list" not in names and "ping" not in names
    assert CALL in names  # the rest is untouched
    for method in ("tools/list", "ping") if transport == "legacy" else ("tools/list",):
        assert telemetry.total(S.SERVER_OPERATION_DURATION.name, {S.MCP_METHOD_NAME: method}) >= 1
        assert telemetry.total(S.CLIENT_OPERATION_DURATION.name, {S.MCP_METHOD_NAME: method}) >= 1


def test_excluded_methods_must_be_names():
    with pytest.raises(mcpobs.ConfigurationError, match="excluded_methods"):
        mcpobs.instrument(excluded_methods=[1, 2])
    with pytest.raises(mcpobs.ConfigurationError, match="server_request_hook"):
        mcpobs.instrument(server_request_hook="tenant")
    assert not mcpobs.MCPInstrumentor().is_instrumented_by_opentelemetry


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_instrument_server_by_hand_without_instrument(transport):
    mcpobs.uninstrument()
    own = CapturedTelemetry()
    server = create_server()
    assert isinstance(server.middleware[0], OpenTelemetryMiddleware)
    mcpobs.instrument_server(server, tracer_provider=own.tracer_provider, meter_provider=own.meter_provider)
    assert isinstance(server.middleware[0], ServerMiddleware)
    await run_calls(transport, _order, server)
    (span,) = server_spans(own, CALL)
    assert span.attributes[S.OUTCOME] == "ok" and span.attributes[S.SERVER_NAME] == "shop"
    assert own.total(S.SERVER_OPERATION_DURATION.name, {S.GEN_AI_TOOL_NAME: "get_order_status"}) == 1
    assert not client_spans(own, CALL)  # clients were not instrumented
    mcpobs.uninstrument_server(server)
    assert isinstance(server.middleware[0], OpenTelemetryMiddleware)
    assert not any(type(m).__module__.startswith("mcpobs") for m in server.middleware)


async def test_instrument_server_beside_instrument_sends_that_server_elsewhere(mcpobs_telemetry):
    own = CapturedTelemetry()
    mine, theirs = create_server("mine"), create_server("theirs")
    mcpobs.instrument_server(mine, tracer_provider=own.tracer_provider, meter_provider=own.meter_provider)
    await run_calls("auto", _order, mine)
    await run_calls("auto", _order, theirs)
    assert [s.attributes[S.SERVER_NAME] for s in server_spans(own, CALL)] == ["mine"]
    assert [s.attributes[S.SERVER_NAME] for s in server_spans(mcpobs_telemetry, CALL)] == ["theirs"]
    assert len(client_spans(mcpobs_telemetry, CALL)) == 2  # the global instrument() still has the clients
    assert sum(isinstance(m, ServerMiddleware) for m in mine.middleware) == 1
