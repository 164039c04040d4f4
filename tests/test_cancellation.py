"""A client that gives up: the call is cancelled, counted, and never a latency sample."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client
from opentelemetry.trace import StatusCode
from shop import create_server
from transports import connected, eventually, read_spans, server_spans, stdio_params

import mcpobs
from mcpobs import semconv as S
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio

WAIT = "tools/call wait_for_stock"


def assert_cancelled(telemetry, span) -> None:
    assert span.attributes[S.OUTCOME] == "cancelled"
    assert span.status.status_code is StatusCode.UNSET
    assert S.ERROR_TYPE not in span.attributes and S.FAILURE_BOUNDARY not in span.attributes
    tool = {S.GEN_AI_TOOL_NAME: "wait_for_stock"}
    assert telemetry.total(S.SERVER_OPERATION_DURATION.name, tool) == 0
    assert telemetry.total(S.SERVER_REQUESTS.name, {**tool, S.OUTCOME: "cancelled"}) == 1


@pytest.mark.parametrize("transport", ["auto", "legacy", "http", "http-legacy"])
async def test_cancelled_call_is_not_a_latency_sample(mcpobs_telemetry, transport):
    server = create_server()
    async with connected(transport, server) as client:
        with anyio.move_on_after(0.3) as scope:
            await client.call_tool("wait_for_stock", {"sku": "KG-1031"})
        assert scope.cancelled_caught
        spans = await eventually(lambda: server_spans(mcpobs_telemetry, WAIT))
        # the shop still serves after a cancelled call
        assert not (await client.call_tool("get_order_status", {"order_id": "O-1873"})).is_error
    (span,) = spans
    assert_cancelled(mcpobs_telemetry, span)
    # the peer's reason is its text: recorded only with record_error_messages (below)
    assert S.CANCEL_REASON not in span.attributes


@pytest.mark.parametrize("transport", ["legacy", "http-legacy"])
async def test_the_peers_reason_is_recorded_when_error_messages_are_opted_in(transport):
    telemetry = capture(record_error_messages=True)
    try:
        async with connected(transport, create_server()) as client:
            with anyio.move_on_after(0.3):
                await client.call_tool("wait_for_stock", {"sku": "KG-1031"})
            (span,) = await eventually(lambda: server_spans(telemetry, WAIT))
    finally:
        mcpobs.uninstrument()
    # JSON-RPC carries the reason in notifications/cancelled (the direct dispatcher and 2026 HTTP give none)
    assert span.attributes[S.CANCEL_REASON] == "caller cancelled"


async def test_timed_out_call_records_the_peers_reason():
    from mcp.shared.exceptions import MCPError

    telemetry = capture(record_error_messages=True)
    try:
        async with Client(create_server(), mode="legacy", read_timeout_seconds=0.3) as client:
            with pytest.raises(MCPError):
                await client.call_tool("wait_for_stock", {"sku": "KG-1031"})
            (span,) = await eventually(lambda: server_spans(telemetry, WAIT))
    finally:
        mcpobs.uninstrument()
    assert_cancelled(telemetry, span)
    assert span.attributes[S.CANCEL_REASON].startswith("timed out after 0.3")
    assert len(span.attributes[S.CANCEL_REASON]) <= S.MAX_REASON_LENGTH


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_cancelled_call_over_stdio(tmp_path, mode):
    spans_file = tmp_path / "spans.jsonl"

    def cancelled():
        return [s for s in read_spans(spans_file) if s["name"] == WAIT and s["kind"] == "SERVER"]

    async with Client(stdio_params(spans_file), mode=mode) as client:
        with anyio.move_on_after(0.5) as scope:
            await client.call_tool("wait_for_stock", {"sku": "KG-1031"})
        assert scope.cancelled_caught
        found = await eventually(cancelled)
    (span,) = found
    assert span["attributes"][S.OUTCOME] == "cancelled"
    assert span["status"] == "UNSET"
    assert S.ERROR_TYPE not in span["attributes"]
    assert S.CANCEL_REASON not in span["attributes"]  # the peer's text: opt-in only
    assert span["attributes"][S.NETWORK_TRANSPORT] == "pipe"
