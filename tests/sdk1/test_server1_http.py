"""mcp 1.x over HTTP: requests the transport refuses, sessions and their ids, trace context from a header.

Over Streamable HTTP and SSE (first-class on 1.x), on each host's app: FastMCP 1's
`streamable_http_app()` and `sse_app()`, FastMCP 3's `http_app()`, and a lowlevel `Server`
mounted by hand on the SDK's session manager or SSE transport.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import httpx
import pytest
from opentelemetry.trace import SpanKind
from servers1 import HOSTS, create
from transports1 import eventually, served, server_spans, session_at, session_over

import mcpobs
from mcpobs import semconv as S
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio

ACCEPT = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
MCP_1_30 = tuple(int(p) for p in version("mcp").split(".")[:2]) >= (1, 30)


def refusals(telemetry):
    return [s for s in server_spans(telemetry) if S.HTTP_RESPONSE_STATUS_CODE in s.attributes]


@pytest.mark.parametrize("host", HOSTS)
async def test_streamable_http_refusals_are_recorded_at_the_transport(telemetry, host):
    with served(create(host), "http") as url:
        with httpx.Client(timeout=10) as http:
            no_session = http.post(url, json=LIST, headers=ACCEPT)
            unknown = http.post(url, json=LIST, headers={**ACCEPT, "mcp-session-id": "f" * 32})
            not_sse = http.post(url, json=INIT, headers={**ACCEPT, "accept": "application/json"})
            opened = http.post(url, json=INIT, headers=ACCEPT)
        async with session_at(url, "http") as session:  # a request that reaches a handler adds no refusal
            await session.list_tools()
    assert no_session.status_code == 400
    assert unknown.status_code == (404 if MCP_1_30 else 400)
    assert not_sse.status_code == 406
    assert opened.status_code == 200
    spans = await eventually(lambda: len(refusals(telemetry)) >= 3 and refusals(telemetry))
    assert sorted(s.attributes[S.HTTP_RESPONSE_STATUS_CODE] for s in spans) == sorted([400, unknown.status_code, 406])
    for span in spans:
        assert span.name == "POST"  # a 1.x client names no method in a header: nothing says which
        assert span.attributes[S.OUTCOME] == "client_error"
        assert span.attributes[S.FAILURE_BOUNDARY] == "transport"
        assert span.attributes[S.NETWORK_TRANSPORT] == "tcp"
    assert telemetry.total(S.SERVER_REQUESTS.name, {S.FAILURE_BOUNDARY: "transport"}) == 3
    assert len(server_spans(telemetry, "tools/list")) == 1


@pytest.mark.parametrize("host", HOSTS)
async def test_an_sse_message_for_no_session_is_refused_at_the_transport(telemetry, host):
    with served(create(host), "sse") as url:
        base = url.rsplit("/", 1)[0]
        with httpx.Client(timeout=10) as http:
            missing = http.post(base + "/messages/", json=LIST)
            unknown = http.post(base + "/messages/?session_id=" + "0" * 32, json=LIST)
    assert missing.status_code == 400 and unknown.status_code == 404
    spans = await eventually(lambda: len(refusals(telemetry)) >= 2 and refusals(telemetry))
    assert sorted(s.attributes[S.HTTP_RESPONSE_STATUS_CODE] for s in spans) == [400, 404]
    assert all(s.attributes[S.OUTCOME] == "client_error" for s in spans)


EXPECTED = {"initialize", "tools/list", "tools/call get_order_status"}


def _all_three(spans: list[Any]) -> list[Any]:
    return spans if {s.name for s in spans} >= EXPECTED else []


@pytest.mark.parametrize("transport", ["http", "sse"])
@pytest.mark.parametrize("host", HOSTS)
async def test_every_request_of_a_session_carries_its_id(telemetry, host, transport):
    ids = []
    with served(create(host), transport) as url:
        for _ in range(2):
            async with session_at(url, transport) as session:
                await session.list_tools()
                await session.call_tool("get_order_status", {"order_id": "O-1873"})
            # a server ends its span once its answer is written: a moment after its client read it
            spans = await eventually(lambda: _all_three(server_spans(telemetry)))
            assert {s.name for s in spans} >= EXPECTED
            found = {s.attributes.get(S.MCP_SESSION_ID) for s in spans}
            assert len(found) == 1 and None not in found, found  # initialize's too
            ids.append(found.pop())
            telemetry.clear()
    assert ids[0] != ids[1]
    assert all(len(i) == 32 for i in ids)  # the transport's own id (a uuid's hex)


async def test_a_keyed_session_id_is_hashed_and_none_is_recorded_when_asked():
    for options, check in (
        ({"session_id_key": "a-secret-of-at-least-16-bytes"}, lambda v: v and len(v) == S.SESSION_ID_HASH_LENGTH),
        ({"record_session_id": False}, lambda v: v is None),
    ):
        telemetry = capture(clients=False, **options)
        try:
            async with session_over("http", create("fastmcp1")) as session:
                await session.list_tools()
        finally:
            mcpobs.uninstrument()
        (span,) = server_spans(telemetry, "tools/list")
        assert check(span.attributes.get(S.MCP_SESSION_ID)), options


async def test_a_stateless_server_has_no_session_and_still_knows_the_revision(telemetry):
    server = create("fastmcp1")
    server.settings.stateless_http = True
    async with session_over("http", server) as session:
        await session.call_tool("get_order_status", {"order_id": "O-1873"})
    (span,) = server_spans(telemetry, "tools/call get_order_status")
    assert S.MCP_SESSION_ID not in span.attributes
    assert span.attributes[S.MCP_PROTOCOL_VERSION] == "2025-11-25"  # from the header: no handshake to read it from
    # Each POST runs a session of its own that negotiated nothing: none is a session sample,
    # but the one that carried `initialize`.
    assert telemetry.total(S.SERVER_SESSION_DURATION.name) <= 1


def _traceparent(trace_id: int, span_id: int) -> str:
    return f"00-{trace_id:032x}-{span_id:016x}-01"


@pytest.mark.parametrize("host", HOSTS)
async def test_the_traceparent_header_parents_a_request_without_meta(telemetry, host):
    header = _traceparent(0xABC, 0xDEF)
    async with session_over("http", create(host), headers={"traceparent": header}) as session:
        await session.call_tool("get_order_status", {"order_id": "O-1873"})
        meta = {"traceparent": _traceparent(0x123, 0x456)}
        await session.call_tool("get_order_status", {"order_id": "O-2001"}, meta=meta)
    by_header, by_meta = sorted(server_spans(telemetry, "tools/call get_order_status"), key=lambda s: s.start_time)
    assert by_header.context.trace_id == 0xABC and by_header.parent.span_id == 0xDEF
    assert by_meta.context.trace_id == 0x123 and by_meta.parent.span_id == 0x456  # `_meta` wins: it is the message's


@pytest.mark.parametrize("transport", ["memory", "http", "sse"])
@pytest.mark.parametrize("host", HOSTS)
async def test_meta_trace_context_parents_the_server_span(telemetry, host, transport):
    tracer = telemetry.tracer_provider.get_tracer("caller")
    async with session_over(transport, create(host)) as session:
        with tracer.start_as_current_span("answer customer", kind=SpanKind.CLIENT) as caller:
            context = caller.get_span_context()
            meta = {"traceparent": _traceparent(context.trace_id, context.span_id)}
            await session.call_tool("get_order_status", {"order_id": "O-1873"}, meta=meta)
    (span,) = server_spans(telemetry, "tools/call get_order_status")
    assert span.context.trace_id == context.trace_id
    assert span.parent.span_id == context.span_id
    assert not span.links  # the parent is not linked to itself
