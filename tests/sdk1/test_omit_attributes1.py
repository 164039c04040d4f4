"""`omit_attributes` on the mcp 1.x line: the groups leave every call span, the handshake keeps the peer."""

from __future__ import annotations

import pytest
from opentelemetry.trace import SpanKind
from servers1 import HOSTS, create
from transports1 import session_over

import mcpobs
from mcpobs import semconv as S
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio

GROUPS = {a for group in S.ATTRIBUTE_GROUPS.values() for a in group.attributes}


@pytest.mark.parametrize("host", HOSTS)
async def test_omitted_groups_leave_call_spans_and_the_handshake_keeps_the_peer(host):
    telemetry = capture(omit_attributes=list(S.ATTRIBUTE_GROUPS))
    try:
        async with session_over("memory", create(host)) as session:
            await session.list_tools()
            assert not (await session.call_tool("get_order_status", {"order_id": "O-1873"})).isError
    finally:
        mcpobs.uninstrument()
    calls = telemetry.spans_named("tools/call get_order_status")
    assert {s.kind for s in calls} == {SpanKind.SERVER, SpanKind.CLIENT}
    for span in calls:
        assert not set(span.attributes) & GROUPS, span.kind
        assert span.attributes[S.OUTCOME] == "ok"
    server = telemetry.span("initialize", SpanKind.SERVER)
    assert server.attributes[S.SERVER_NAME] == "shop" and server.attributes[S.SERVER_VERSION] == "1.0.0"
    assert server.attributes[S.CLIENT_NAME]
    client = telemetry.span("initialize", SpanKind.CLIENT)
    assert client.attributes[S.SERVER_VERSION] == "1.0.0"
    served = {S.MCP_METHOD_NAME: "tools/call", S.SERVER_VERSION: "1.0.0"}
    assert telemetry.total(S.SERVER_OPERATION_DURATION.name, served) == 1
    assert telemetry.total(S.CLIENT_OPERATION_DURATION.name, served) == 1


async def test_by_default_both_sides_carry_the_groups_on_each_call():
    telemetry = capture()
    try:
        async with session_over("memory", create("fastmcp1")) as session:
            await session.list_tools()
            await session.call_tool("get_order_status", {"order_id": "O-1873"})
    finally:
        mcpobs.uninstrument()
    server = telemetry.span("tools/call get_order_status", SpanKind.SERVER)
    client = telemetry.span("tools/call get_order_status", SpanKind.CLIENT)
    assert {S.SERVER_NAME, S.CLIENT_NAME, S.TOOL_SCHEMA_FINGERPRINT} <= set(server.attributes)
    assert {S.SERVER_VERSION, S.TOOL_CONTRACT_FINGERPRINT} <= set(client.attributes)
    assert S.TOOL_SCHEMA_STALE not in server.attributes  # written only when true
