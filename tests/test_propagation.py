"""One trace from the host through every transport: the client span is the server span's parent."""

from __future__ import annotations

from contextlib import ExitStack

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from opentelemetry.trace import SpanKind
from shop import create_server
from transports import TRANSPORTS, client_for, eventually, read_spans, serve_http, stdio_params

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

CALL = "tools/call get_order_status"


def host_span(telemetry):
    """The host's own span, made with the same tracer provider as mcpobs's."""
    return telemetry.tracer_provider.get_tracer("host").start_as_current_span("answer customer")


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_host_client_and_server_spans_form_one_trace(mcpobs_telemetry, transport):
    server = create_server()
    with ExitStack() as stack:
        base_url = stack.enter_context(serve_http(server.streamable_http_app())) if transport == "http" else None
        with host_span(mcpobs_telemetry) as host:
            async with client_for(transport, server, base_url) as client:
                await client.call_tool("get_order_status", {"order_id": "O-1873"})
    (client_span,) = mcpobs_telemetry.spans_named(CALL, SpanKind.CLIENT)
    (server_span,) = mcpobs_telemetry.spans_named(CALL, SpanKind.SERVER)
    assert client_span.parent.span_id == host.get_span_context().span_id
    assert server_span.parent.span_id == client_span.context.span_id
    assert not server_span.links  # the parent is not linked to itself
    trace_id = host.get_span_context().trace_id
    spans = mcpobs_telemetry.spans()
    assert {s.context.trace_id for s in spans} == {trace_id}
    assert not [s for s in spans if s.name.startswith("MCP send")]
    assert mcpobs_telemetry.total(S.CLIENT_OPERATION_DURATION.name, {S.GEN_AI_TOOL_NAME: "get_order_status"}) == 1


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_stdio_server_spans_are_children_of_the_client_spans(mcpobs_telemetry, tmp_path, mode):
    spans_file = tmp_path / "spans.jsonl"
    with host_span(mcpobs_telemetry) as host:
        async with Client(stdio_params(spans_file), mode=mode) as client:
            await client.call_tool("get_order_status", {"order_id": "O-1873"})
            await client.call_tool("get_order_status", {"order_id": "O-9999"})
            server_spans = await eventually(
                lambda: [s for s in read_spans(spans_file) if s["name"] == CALL and s["kind"] == "SERVER"]
            )
    client_spans = mcpobs_telemetry.spans_named(CALL, SpanKind.CLIENT)
    assert len(client_spans) == len(server_spans) == 2
    trace_id = f"{host.get_span_context().trace_id:032x}"
    client_ids = {f"{s.context.span_id:016x}": s for s in client_spans}
    for server_span in server_spans:
        assert server_span["trace_id"] == trace_id
        parent = client_ids[server_span["parent_id"]]
        assert parent.attributes[S.OUTCOME] == server_span["attributes"][S.OUTCOME]
        assert parent.attributes[S.NETWORK_TRANSPORT] == "pipe"
    assert not [s for s in mcpobs_telemetry.spans() if s.name.startswith("MCP send")]
    assert mcpobs_telemetry.total(S.CLIENT_OPERATION_DURATION.name, {S.NETWORK_TRANSPORT: "pipe"}) >= 2


async def test_a_timed_out_calls_cancel_notification_joins_the_calls_trace(mcpobs_telemetry):
    server = create_server()
    async with Client(server, mode="legacy", read_timeout_seconds=0.2) as client:
        await client.list_tools()  # a client names the tools it listed
        with pytest.raises(MCPError):
            await client.call_tool("wait_for_stock", {"sku": "KG-1031"})
        (cancel,) = await eventually(lambda: mcpobs_telemetry.spans_named("notifications/cancelled", SpanKind.SERVER))
    (call,) = mcpobs_telemetry.spans_named("tools/call wait_for_stock", SpanKind.CLIENT)
    assert cancel.parent is not None
    assert cancel.parent.span_id == call.context.span_id
    assert cancel.context.trace_id == call.context.trace_id


async def test_a_cancel_notification_over_stdio_joins_the_calls_trace(mcpobs_telemetry, tmp_path):
    spans_file = tmp_path / "spans.jsonl"
    async with Client(stdio_params(spans_file), mode="legacy") as client:
        await client.list_tools()  # a client names the tools it listed
        with anyio.move_on_after(0.3):
            await client.call_tool("wait_for_stock", {"sku": "KG-1031"})
        found = await eventually(lambda: [s for s in read_spans(spans_file) if s["name"] == "notifications/cancelled"])
    (cancel,) = found
    (call,) = mcpobs_telemetry.spans_named("tools/call wait_for_stock", SpanKind.CLIENT)
    assert cancel["parent_id"] == f"{call.context.span_id:016x}"
    assert cancel["trace_id"] == f"{call.context.trace_id:032x}"


@pytest.mark.parametrize("transport", ["legacy", "http"])
async def test_the_initialized_notification_is_not_an_orphan_root(mcpobs_telemetry, transport):
    server = create_server()
    with ExitStack() as stack:
        base_url = stack.enter_context(serve_http(server.streamable_http_app())) if transport == "http" else None
        client = Client(base_url + "/mcp", mode="legacy") if transport == "http" else Client(server, mode="legacy")
        async with client:  # wait inside: closing at once can race the notification's delivery
            (received,) = await eventually(
                lambda: mcpobs_telemetry.spans_named("notifications/initialized", SpanKind.SERVER)
            )
    (sent,) = mcpobs_telemetry.spans_named("notifications/initialized", SpanKind.CLIENT)
    assert received.parent.span_id == sent.context.span_id
