"""`mcp.session.id` on a server's own request to its client, over real Streamable HTTP.

A server on a legacy (2025-11-25) session asks its client while serving `tools/call`
(`elicitation/create` and `roots/list`, through `Resolve`). The server's CLIENT span for that
question belongs to the same session as the request it serves, so it records the same
`mcp.session.id` as that request's SERVER span: the raw id, or its keyed hash when
`session_id_key` is set, and nothing when `record_session_id` is off. (A stateless server
has no session id, and cannot ask either: the SDK refuses the send with no back-channel.)
"""

from __future__ import annotations

import pytest
from mcp import Client
from opentelemetry.trace import SpanKind
from shop import create_server
from test_client_spans import slow_human, some_roots
from transports import serve_http

import mcpobs
from mcpobs import semconv as S
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio

KEY = "a-secret-of-at-least-16-bytes"
ASKED = ("elicitation/create", "roots/list")


async def _refund(**options):
    """One `approve_refund` over Streamable HTTP in legacy mode: the server asks twice while serving it."""
    telemetry = capture(**options)
    try:
        with serve_http(create_server().streamable_http_app()) as base_url:
            client = Client(
                base_url + "/mcp", mode="legacy", elicitation_callback=slow_human, list_roots_callback=some_roots
            )
            async with client:
                await client.call_tool("approve_refund", {"order_id": "O-1873"})
        return telemetry
    finally:
        mcpobs.uninstrument()


def _served(telemetry):
    (served,) = [s for s in telemetry.spans_named("tools/call approve_refund") if s.kind is SpanKind.SERVER]
    return served


@pytest.mark.parametrize("options", [{}, {"session_id_key": KEY}], ids=["raw", "hashed"])
async def test_the_servers_request_to_its_client_carries_the_served_sessions_id(options):
    telemetry = await _refund(**options)
    session = _served(telemetry).attributes[S.MCP_SESSION_ID]
    assert session
    for method in ASKED:
        (asked,) = telemetry.spans_named(method, SpanKind.CLIENT)  # the server, asking
        (answered,) = telemetry.spans_named(method, SpanKind.SERVER)  # the client, answering
        assert asked.attributes.get(S.MCP_SESSION_ID) == session
        assert answered.attributes.get(S.MCP_SESSION_ID) == session  # the client shares the key here
    # never a metric label
    assert all(S.MCP_SESSION_ID not in p.attributes for name in S.METRICS for p in telemetry.points(name))


async def test_the_hash_option_hashes_the_asking_span_too():
    raw = _served(await _refund()).attributes[S.MCP_SESSION_ID]
    telemetry = await _refund(session_id_key=KEY)
    hashed = _served(telemetry).attributes[S.MCP_SESSION_ID]
    assert hashed != raw and len(hashed) == S.SESSION_ID_HASH_LENGTH
    for method in ASKED:
        (asked,) = telemetry.spans_named(method, SpanKind.CLIENT)
        assert asked.attributes[S.MCP_SESSION_ID] == hashed


async def test_record_session_id_false_leaves_the_asking_span_without_one():
    telemetry = await _refund(record_session_id=False)
    for method in ASKED:
        (asked,) = telemetry.spans_named(method, SpanKind.CLIENT)
        assert S.MCP_SESSION_ID not in asked.attributes


async def test_the_servers_request_to_its_client_has_the_served_requests_revision_and_network():
    """The asking span and its duration carry the revision and network of the request it is asked
    within, which that request's SERVER span takes only at its end (`S.AT_SPAN_END`)."""
    telemetry = await _refund()
    served = _served(telemetry).attributes
    for method in ASKED:
        (asked,) = telemetry.spans_named(method, SpanKind.CLIENT)
        for key in (S.MCP_PROTOCOL_VERSION, S.NETWORK_TRANSPORT, S.NETWORK_PROTOCOL_NAME):
            assert asked.attributes[key] == served[key], (method, key)
        assert asked.attributes[S.NETWORK_TRANSPORT] == "tcp" and served[S.MCP_PROTOCOL_VERSION] == "2025-11-25"
        labels = {S.MCP_METHOD_NAME: method, S.NETWORK_TRANSPORT: "tcp", S.MCP_PROTOCOL_VERSION: "2025-11-25"}
        assert telemetry.total(S.CLIENT_OPERATION_DURATION.name, labels) == 1, method
