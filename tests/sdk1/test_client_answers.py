"""A 1.x server asks its client (elicitation, roots): for that exchange the client is the server.

The client's answer is a SERVER span on the client (in the trace the request carries, else
linked to the session's handshake; the servers here run mcpobs, so they carry it) with `mcp.server.operation.duration`; a host that will not
answer is a `client_error` with the code it sent.
"""

from __future__ import annotations

from typing import Any

import mcp.types as types
import pytest
from clients import client_spans, session, shop
from mcp.server.fastmcp import Context
from opentelemetry.trace import SpanKind
from pydantic import BaseModel

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio


class Approval(BaseModel):
    approved: bool


def asking_shop() -> Any:
    server = shop()

    @server.tool()
    async def approve_refund(order_id: str, ctx: Context) -> str:  # type: ignore[type-arg]
        """Asks the user, then the client's roots."""
        answer = await ctx.elicit(f"Approve the refund for {order_id}?", Approval)
        roots = await ctx.session.list_roots()
        return f"{answer.action} with {len(roots.roots)} roots"

    return server


async def approve(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"approved": True})


async def some_roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///shop")])  # type: ignore[arg-type]


async def refuse(context: Any, params: Any) -> types.ErrorData:
    return types.ErrorData(code=-32600, message="the user closed the dialog")


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_each_answer_is_a_server_span_on_the_client_with_its_duration(mcpobs_telemetry, transport):
    async with session(
        transport, asking_shop(), elicitation_callback=approve, list_roots_callback=some_roots
    ) as client:
        result = await client.call_tool("approve_refund", {"order_id": "O-1873"})
    assert result.content[0].text == "accept with 1 roots"  # type: ignore[union-attr]
    (call,) = client_spans(mcpobs_telemetry, "tools/call approve_refund")
    for method in ("elicitation/create", "roots/list"):
        (answered,) = mcpobs_telemetry.spans_named(method, SpanKind.SERVER)
        assert answered.attributes[S.OUTCOME] == "ok"
        assert answered.attributes[S.MCP_PROTOCOL_VERSION] == "2025-11-25"
        assert answered.attributes[S.JSONRPC_REQUEST_ID]
        # the instrumented 1.x server's own request (its CLIENT span, `_client/sdk1/asks.py`) carries
        # its trace context: the answer is its child, in the tool call's trace, with no link
        (asked,) = mcpobs_telemetry.spans_named(method, SpanKind.CLIENT)
        assert answered.parent is not None and answered.parent.span_id == asked.context.span_id
        assert answered.context.trace_id == call.context.trace_id and not answered.links
    durations = {p.attributes[S.MCP_METHOD_NAME] for p in mcpobs_telemetry.points(S.SERVER_OPERATION_DURATION.name)}
    assert {"elicitation/create", "roots/list"} <= durations


async def test_a_refused_question_is_the_clients_error_with_its_code(mcpobs_telemetry):
    async with session("memory", asking_shop(), elicitation_callback=refuse) as client:
        result = await client.call_tool("approve_refund", {"order_id": "O-1873"})
    assert result.isError  # FastMCP 1 turns the refusal into the tool's error
    (answered,) = mcpobs_telemetry.spans_named("elicitation/create", SpanKind.SERVER)
    assert answered.attributes[S.OUTCOME] == "client_error"
    assert answered.attributes[S.RPC_RESPONSE_STATUS_CODE] == "-32600"
