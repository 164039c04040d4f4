"""Multi-round-trip requests: interim rounds are pending_input, every round is numbered."""

from __future__ import annotations

from typing import Annotated

import mcp_types as types
import pytest
from mcp import Client
from mcp.server.mcpserver.resolve import Resolve, Sample
from mcp.server.request_state import RequestStateSecurity
from opentelemetry.trace import StatusCode
from shop import create_server
from transports import connected, server_spans

import mcpobs
from mcpobs import semconv as S

pytestmark = pytest.mark.anyio


async def on_elicit(ctx, params):
    return types.ElicitResult(action="accept", content={"approved": True})


async def on_roots(ctx):
    return types.ListRootsResult(roots=[types.Root(uri="file:///shop")])


async def on_sample(ctx, params):
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="Sorry for the delay."), model="m"
    )


async def draft_apology(order_id: str) -> Sample:
    text = f"Draft an apology for {order_id}"
    return Sample(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=text))], max_tokens=50
    )


CALLBACKS = {"elicitation_callback": on_elicit, "list_roots_callback": on_roots, "sampling_callback": on_sample}


async def call(server, transport: str, tool: str, arguments: dict) -> types.CallToolResult:
    async with connected(transport, server, **CALLBACKS) as client:
        return await client.call_tool(tool, arguments)


def rounds(telemetry, name: str):
    return server_spans(telemetry, name)


def assert_no_state_recorded(spans, *secrets: str) -> None:
    for span in spans:
        for value in span.attributes.values():
            assert not any(secret in str(value) for secret in secrets)
            assert "x-mcpobs-round" not in str(value)


@pytest.mark.parametrize("transport", ["auto", "http"])
async def test_two_round_elicitation_is_one_pending_round_and_one_latency_sample(mcpobs_telemetry, transport):
    result = await call(create_server(), transport, "approve_refund", {"order_id": "O-1873"})
    assert result.content[0].text == "refund for O-1873: approved"
    first, second = rounds(mcpobs_telemetry, "tools/call approve_refund")
    assert first.attributes[S.OUTCOME] == "pending_input"
    assert first.status.status_code is StatusCode.UNSET and S.ERROR_TYPE not in first.attributes
    assert first.attributes[S.MRTR_ROUND] == 1
    assert first.attributes[S.MRTR_INPUT_METHODS] == ("elicitation/create", "roots/list")
    assert second.attributes[S.OUTCOME] == "ok"
    assert second.attributes[S.MRTR_ROUND] == 2
    assert S.MRTR_INPUT_METHODS not in second.attributes
    assert first.attributes[S.JSONRPC_REQUEST_ID] != second.attributes[S.JSONRPC_REQUEST_ID]
    # each round links to the round that asked
    assert [link.context.span_id for link in second.links if link.context.span_id == first.context.span_id]
    tool = {S.GEN_AI_TOOL_NAME: "approve_refund"}
    assert mcpobs_telemetry.total(S.SERVER_OPERATION_DURATION.name, tool) == 1
    assert mcpobs_telemetry.total(S.SERVER_OPERATION_DURATION.name, {**tool, S.OUTCOME: "ok"}) == 1
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, {**tool, S.OUTCOME: "pending_input"}) == 1
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, {**tool, S.OUTCOME: "ok"}) == 1
    assert_no_state_recorded([first, second], '"outcomes"', "v1.")


@pytest.mark.parametrize("transport", ["auto", "http"])
async def test_hand_rolled_input_required_counts_three_rounds_and_keeps_the_tools_state(mcpobs_telemetry, transport):
    result = await call(create_server(), transport, "confirm_cancel", {"order_id": "O-2001"})
    # the tool got back exactly the state it minted: the round marker never reaches it
    assert result.content[0].text == "O-2001 cancelled after asked-twice"
    spans = rounds(mcpobs_telemetry, "tools/call confirm_cancel")
    assert [(s.attributes[S.MRTR_ROUND], s.attributes[S.OUTCOME]) for s in spans] == [
        (1, "pending_input"),
        (2, "pending_input"),
        (3, "ok"),
    ]
    assert spans[1].attributes[S.MRTR_INPUT_METHODS] == ("elicitation/create",)
    assert mcpobs_telemetry.total(S.SERVER_OPERATION_DURATION.name, {S.GEN_AI_TOOL_NAME: "confirm_cancel"}) == 1
    assert_no_state_recorded(spans, "asked-once", "asked-twice")


async def test_resolve_with_sample_is_recorded_as_a_sampling_round(mcpobs_telemetry):
    server = create_server()

    @server.tool()
    async def apologise(order_id: str, draft: Annotated[types.CreateMessageResult, Resolve(draft_apology)]) -> str:
        return draft.content.text

    result = await call(server, "auto", "apologise", {"order_id": "O-1873"})
    assert result.content[0].text == "Sorry for the delay."
    first, second = rounds(mcpobs_telemetry, "tools/call apologise")
    assert first.attributes[S.MRTR_INPUT_METHODS] == ("sampling/createMessage",)
    assert (first.attributes[S.MRTR_ROUND], second.attributes[S.MRTR_ROUND]) == (1, 2)


async def test_a_one_round_call_carries_no_round(mcpobs_telemetry):
    await call(create_server(), "auto", "get_order_status", {"order_id": "O-1873"})
    (span,) = rounds(mcpobs_telemetry, "tools/call get_order_status")
    assert S.MRTR_ROUND not in span.attributes


async def test_at_legacy_revisions_resolve_asks_mid_call_in_one_round(mcpobs_telemetry):
    result = await call(create_server(), "legacy", "approve_refund", {"order_id": "O-1873"})
    assert result.content[0].text == "refund for O-1873: approved"
    (span,) = rounds(mcpobs_telemetry, "tools/call approve_refund")
    assert span.attributes[S.OUTCOME] == "ok"
    assert S.MRTR_ROUND not in span.attributes


async def test_a_forged_state_is_refused_by_the_boundary_not_counted(mcpobs_telemetry):
    from mcp.shared.exceptions import MCPError
    from transports import send_raw

    server = create_server()
    async with Client(server) as client:
        forged = '{"x-mcpobs-round":"7:' + "1" * 32 + ":" + "2" * 16 + '"}'
        params = {"name": "confirm_cancel", "arguments": {"order_id": "O-1"}, "requestState": forged}
        with pytest.raises(MCPError):
            await send_raw(client, "tools/call", params)
    (span,) = rounds(mcpobs_telemetry, "tools/call confirm_cancel")
    assert span.attributes[S.OUTCOME] == "client_error"
    assert S.MRTR_ROUND not in span.attributes and not span.links


async def test_a_replica_without_mcpobs_reads_the_same_state(mcpobs_telemetry):
    """A rolling deploy: round 1 on an instrumented replica, round 2 on one without mcpobs."""
    security = RequestStateSecurity(keys=[b"k" * 32])
    instrumented = create_server(request_state_security=security)
    order = {"order_id": "O-2001"}
    async with Client(instrumented) as client:
        first = await client.session.call_tool("confirm_cancel", order, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult)
    mcpobs.uninstrument()
    plain = create_server(request_state_security=security)
    answer = {"sure": types.ElicitResult(action="accept", content={})}
    async with Client(plain) as client:
        second = await client.session.call_tool(
            "confirm_cancel",
            order,
            input_responses=answer,
            request_state=first.request_state,
            allow_input_required=True,
        )
    # the plain replica's tool saw exactly "asked-once" and moved on to its second question
    assert isinstance(second, types.InputRequiredResult)
    assert list(second.input_requests) == ["really"]
