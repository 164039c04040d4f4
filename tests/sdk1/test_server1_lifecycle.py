"""Lifecycle states on mcp 1.x servers: progress, cancellation, a server asking its client, subscription events, sessions.

What 1.x has instead of 2.x's concepts: no `input_required` rounds (a server asks its client by
a request of its own: a CLIENT span on the server, under the request that asked), no listen
streams (each `resources/updated` it sends is a `deliver` span), and a client that never cancels
by itself (a `notifications/cancelled` is answered "Request cancelled" at once by the SDK).
"""

from __future__ import annotations

import anyio
import pytest
from mcp import types
from mcp.shared.exceptions import McpError
from opentelemetry.trace import SpanKind, StatusCode
from servers1 import CATALOG, HOSTS, create
from transports1 import eventually, server_spans, session_over

import mcpobs
from mcpobs import semconv as S
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio


async def _progressed(*args) -> None:
    pass


# -- progress --------------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["memory", "http"])
@pytest.mark.parametrize("host", HOSTS)
async def test_each_progress_report_is_a_child_span_of_its_call(telemetry, host, transport):
    async with session_over(transport, create(host)) as session:
        await session.call_tool("slow_export", {"rows": 3}, progress_callback=_progressed)
    (call,) = server_spans(telemetry, "tools/call slow_export")
    reports = telemetry.spans_named(S.PROGRESS_SPAN)
    assert len(reports) == 3
    assert all(r.parent.span_id == call.context.span_id for r in reports)
    assert [r.attributes[S.PROGRESS_VALUE] for r in reports] == [1.0, 2.0, 3.0]
    assert all(r.attributes[S.PROGRESS_TOTAL] == 3.0 and r.attributes[S.PROGRESS_REQUESTED] for r in reports)
    assert S.PROGRESS_MESSAGE not in reports[0].attributes  # text the tool wrote: opt-in only
    assert telemetry.total(S.PROGRESS_REPORTS.name, {S.GEN_AI_TOOL_NAME: "slow_export"}) == 3


@pytest.mark.parametrize("host", ["fastmcp1", "fastmcp3"])
async def test_a_report_nobody_asked_for_is_still_recorded(telemetry, host):
    """The frameworks send nothing without a token; the report is still the tool's progress."""
    async with session_over("memory", create(host)) as session:
        await session.call_tool("slow_export", {"rows": 2})
    reports = telemetry.spans_named(S.PROGRESS_SPAN)
    assert len(reports) == 2 and not any(r.attributes[S.PROGRESS_REQUESTED] for r in reports)


async def test_progress_past_the_cap_is_counted_not_recorded():
    telemetry = capture(clients=False, max_progress_spans=2)
    try:
        async with session_over("memory", create("fastmcp1")) as session:
            await session.call_tool("slow_export", {"rows": 5}, progress_callback=_progressed)
    finally:
        mcpobs.uninstrument()
    (call,) = server_spans(telemetry, "tools/call slow_export")
    assert len(telemetry.spans_named(S.PROGRESS_SPAN)) == 2
    assert call.attributes[S.PROGRESS_DROPPED] == 3
    assert [e.name for e in call.events] == [S.EVENT_PROGRESS_CAP_REACHED]
    assert telemetry.total(S.PROGRESS_REPORTS.name) == 5


# -- cancellation ----------------------------------------------------------------------------------


async def _cancel_while_waiting(session, reason: str | None = "caller cancelled") -> McpError:
    """Call `wait_for_stock` and cancel it by `notifications/cancelled` (a 1.x client never sends one itself)."""
    request_id = session._request_id  # the id the call goes out with
    failed: list[McpError] = []

    async def call() -> None:
        with pytest.raises(McpError) as raised:
            await session.call_tool("wait_for_stock", {"sku": "KG-1031"})
        failed.append(raised.value)

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        await anyio.sleep(0.3)
        cancel = types.CancelledNotification(
            params=types.CancelledNotificationParams(requestId=request_id, reason=reason)
        )
        await session.send_notification(types.ClientNotification(cancel))
    return failed[0]


def assert_cancelled(telemetry, span) -> None:
    assert span.attributes[S.OUTCOME] == "cancelled"
    assert span.status.status_code is StatusCode.UNSET
    assert S.ERROR_TYPE not in span.attributes and S.FAILURE_BOUNDARY not in span.attributes
    tool = {S.GEN_AI_TOOL_NAME: "wait_for_stock"}
    assert telemetry.total(S.SERVER_OPERATION_DURATION.name, tool) == 0  # never a latency sample
    assert telemetry.total(S.SERVER_REQUESTS.name, {**tool, S.OUTCOME: "cancelled"}) == 1


@pytest.mark.parametrize("transport", ["memory", "http"])
@pytest.mark.parametrize("host", HOSTS)
async def test_a_cancelled_call_is_cancelled_and_no_latency_sample(telemetry, host, transport):
    async with session_over(transport, create(host)) as session:
        answered = await _cancel_while_waiting(session)
        (span,) = await eventually(lambda: server_spans(telemetry, "tools/call wait_for_stock"))
        assert not (await session.call_tool("get_order_status", {"order_id": "O-1873"})).isError  # still serving
    assert answered.error.code == 0 and answered.error.message == "Request cancelled"  # the SDK's own answer
    assert_cancelled(telemetry, span)
    assert S.CANCEL_REASON not in span.attributes  # the peer's text: opt-in only


async def test_the_peers_reason_is_recorded_when_error_messages_are_opted_in():
    telemetry = capture(clients=False, record_error_messages=True)
    try:
        async with session_over("memory", create("fastmcp1")) as session:
            await _cancel_while_waiting(session, reason="timed out after 0.3 s")
            (span,) = await eventually(lambda: server_spans(telemetry, "tools/call wait_for_stock"))
    finally:
        mcpobs.uninstrument()
    assert_cancelled(telemetry, span)
    assert span.attributes[S.CANCEL_REASON] == "timed out after 0.3 s"


@pytest.mark.parametrize("host", HOSTS)
async def test_a_call_in_flight_when_the_transport_closes_is_cancelled(telemetry, host):
    """mcp 1.30 re-raises the close's cancellation out of the dispatch, 1.24 swallows it: cancelled either way."""
    async with session_over("memory", create(host)) as session, anyio.create_task_group() as tg:
        tg.start_soon(session.call_tool, "wait_for_stock", {"sku": "KG-1031"})
        await anyio.sleep(0.3)
        tg.cancel_scope.cancel()
    (span,) = await eventually(lambda: server_spans(telemetry, "tools/call wait_for_stock"))
    assert_cancelled(telemetry, span)


# -- a server asking its client ------------------------------------------------------------------------


async def _approve(ctx, params):
    _approve.meta = ctx.meta  # what the server's request carried in `_meta`
    return types.ElicitResult(action="accept", content={"approved": True})


async def _sample(ctx, params):
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="Sorry for the delay."), model="m"
    )


@pytest.mark.parametrize("transport", ["memory", "http"])
@pytest.mark.parametrize("host", HOSTS)
async def test_elicitation_is_a_client_span_under_the_call_that_asked(telemetry, host, transport):
    async with session_over(transport, create(host), elicitation_callback=_approve) as session:
        result = await session.call_tool("approve_refund", {"order_id": "O-1873"})
    assert not result.isError and "True" in result.content[0].text
    (call,) = server_spans(telemetry, "tools/call approve_refund")
    assert call.attributes[S.OUTCOME] == "ok"  # one request on 1.x: no pending_input round
    (asked,) = telemetry.spans_named("elicitation/create", SpanKind.CLIENT)
    assert asked.parent.span_id == call.context.span_id
    assert asked.attributes[S.OUTCOME] == "ok"
    assert asked.attributes[S.MCP_PROTOCOL_VERSION] == "2025-11-25"
    assert asked.attributes[S.JSONRPC_REQUEST_ID] == "0"  # the server's own first request
    if transport == "http":
        assert asked.attributes[S.MCP_SESSION_ID] == call.attributes[S.MCP_SESSION_ID]
        assert asked.attributes[S.NETWORK_TRANSPORT] == "tcp"
    # The question carries its span's context to the client (1.x sends none of its own).
    traceparent = getattr(_approve.meta, "traceparent", None)
    assert traceparent.startswith(f"00-{asked.context.trace_id:032x}-{asked.context.span_id:016x}-")
    assert telemetry.total(S.CLIENT_OPERATION_DURATION.name, {S.MCP_METHOD_NAME: "elicitation/create"}) == 1


@pytest.mark.parametrize("host", HOSTS)
async def test_sampling_is_a_client_span_and_a_refusal_is_the_clients(telemetry, host):
    async with session_over("memory", create(host), sampling_callback=_sample) as session:
        assert not (await session.call_tool("draft_apology", {"order_id": "O-1873"})).isError
    async with session_over("memory", create(host)) as session:  # no sampling callback: the client refuses
        assert (await session.call_tool("draft_apology", {"order_id": "O-1873"})).isError
    answered, refused = sorted(
        telemetry.spans_named("sampling/createMessage", SpanKind.CLIENT), key=lambda s: s.start_time
    )
    assert answered.attributes[S.OUTCOME] == "ok"
    assert refused.attributes[S.OUTCOME] in ("client_error", "server_error")
    assert refused.attributes[S.RPC_RESPONSE_STATUS_CODE]


# -- subscription events ---------------------------------------------------------------------------


@pytest.mark.parametrize("host", HOSTS)
async def test_each_resource_update_sent_is_a_delivery_span(telemetry, host):
    async with session_over("memory", create(host)) as session:
        if host == "lowlevel":
            await session.subscribe_resource(CATALOG)  # type: ignore[arg-type]
        await session.call_tool("restock", {})
    (call,) = server_spans(telemetry, "tools/call restock")
    (delivered,) = telemetry.spans_named("deliver resource_updated")
    assert delivered.kind is SpanKind.PRODUCER
    assert delivered.parent.span_id == call.context.span_id
    assert delivered.attributes[S.SUBSCRIPTION_EVENT] == "resource_updated"
    assert delivered.attributes[S.MCP_RESOURCE_URI] == CATALOG
    direction = {S.SUBSCRIPTION_DIRECTION: "delivered", S.SUBSCRIPTION_EVENT: "resource_updated"}
    assert telemetry.total(S.SUBSCRIPTION_EVENTS.name, direction) == 1
    if host == "lowlevel":
        subscribed = server_spans(telemetry, "resources/subscribe")[0]
        assert subscribed.attributes[S.MCP_RESOURCE_URI] == CATALOG and subscribed.attributes[S.OUTCOME] == "ok"


# -- sessions ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["memory", "http", "sse"])
@pytest.mark.parametrize("host", HOSTS)
async def test_one_session_duration_per_session(telemetry, host, transport):
    async with session_over(transport, create(host)) as session:
        await session.send_ping()

    def sampled():
        return telemetry.points(S.SERVER_SESSION_DURATION.name)

    (point,) = await eventually(sampled)
    assert point.count == 1
    assert point.attributes[S.MCP_PROTOCOL_VERSION] == "2025-11-25"
    assert S.ERROR_TYPE not in point.attributes
    if transport == "memory":
        assert S.NETWORK_TRANSPORT not in point.attributes
    else:
        assert point.attributes[S.NETWORK_TRANSPORT] == "tcp"
