"""A client that gives up: the call is cancelled, counted, and never a latency sample."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client
from opentelemetry.trace import StatusCode
from shop import create_server
from transports import connected, eventually, read_spans, server_spans, stdio_params

from mcpobs import semconv as S

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
    if transport in ("legacy", "http-legacy"):  # JSON-RPC carries the reason in notifications/cancelled
        assert span.attributes[S.CANCEL_REASON] == "caller cancelled"
    else:  # the direct dispatcher and 2026 HTTP (the client aborts the POST) give none
        assert S.CANCEL_REASON not in span.attributes


async def test_timed_out_call_records_the_peers_reason(mcpobs_telemetry):
    from mcp.shared.exceptions import MCPError

    server = create_server()
    async with Client(server, mode="legacy", read_timeout_seconds=0.3) as client:
        with pytest.raises(MCPError):
            await client.call_tool("wait_for_stock", {"sku": "KG-1031"})
        (span,) = await eventually(lambda: server_spans(mcpobs_telemetry, WAIT))
    assert_cancelled(mcpobs_telemetry, span)
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
    assert span["attributes"][S.CANCEL_REASON] == "caller cancelled"
    assert span["attributes"][S.NETWORK_TRANSPORT] == "pipe"
