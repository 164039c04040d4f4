"""mcp 1.x sends no trace context; an instrumented 1.x client does, as the conventions define.

Every request and notification carries its CLIENT span's `traceparent` (and `tracestate`) in
`params._meta`, those sent without params too (`tools/list`, `ping`, `notifications/initialized`);
the host's baggage only with `send_baggage=True`; over HTTP `traceparent` also rides as a header.
What the server received is read at the 1.x server's own entry points (`clients.received_meta`).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from clients import client_spans, received_meta, recording_headers, serve_http, session, shop, traceparent_of
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from opentelemetry import baggage, context, trace
from opentelemetry.trace import SpanKind

import mcpobs
from mcpobs import semconv as S
from mcpobs._core import inventory
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio


async def some_calls(client: Any) -> None:
    await client.list_tools()
    await client.call_tool("get_order_status", {"order_id": "O-1873"})
    await client.send_ping()
    await client.list_prompts()
    await client.get_prompt("refund_reply", {"customer": "Ada"})
    await client.read_resource("shop://catalog")


@pytest.mark.parametrize("transport", ["memory", "http", "sse"])
async def test_every_message_carries_the_trace_context_of_its_client_span(mcpobs_telemetry, transport):
    tracer = mcpobs_telemetry.tracer_provider.get_tracer("host")
    with received_meta() as seen, tracer.start_as_current_span("host") as host:
        async with session(transport) as client:
            await some_calls(client)
    spans = client_spans(mcpobs_telemetry)
    assert [m for m, _ in seen] == [s.attributes["mcp.method.name"] for s in spans]
    for (method, meta), span in zip(seen, spans, strict=True):
        assert meta.get("traceparent") == traceparent_of(span), method
        assert span.context.trace_id == host.get_span_context().trace_id
    # each under the host's span, or under the call it was sent for (the SDK's own listing, the
    # handshake's notifications/initialized)
    parents = {host.get_span_context().span_id} | {s.context.span_id for s in spans}
    assert all(s.parent.span_id in parents for s in spans)
    assert sum(s.parent.span_id == host.get_span_context().span_id for s in spans) == len(spans) - 1


async def test_the_callers_own_meta_stays_and_its_trace_keys_are_the_calls(mcpobs_telemetry):
    stale = "00-" + "1" * 32 + "-" + "2" * 16 + "-01"
    progress: list[float] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    with received_meta() as seen:
        async with session("memory") as client:
            await client.list_tools()
            await client.call_tool(
                "slow_export", {"rows": 2}, progress_callback=on_progress, meta={"traceparent": stale, "tenant": "t1"}
            )
    ((_, meta),) = [(m, meta) for m, meta in seen if m == "tools/call"]
    (span,) = client_spans(mcpobs_telemetry, "tools/call slow_export")
    assert meta["traceparent"] == traceparent_of(span)  # the call's span: the innermost one
    assert meta["tenant"] == "t1"
    assert str(meta["progressToken"]) == span.attributes["jsonrpc.request.id"] == "2"  # the SDK's token: its id
    assert progress == [1, 2]


@pytest.mark.parametrize("send", [False, True])
async def test_the_hosts_baggage_is_sent_only_when_asked(send):
    captured = capture(send_baggage=send)
    try:
        token = context.attach(baggage.set_baggage("user.email", "ada@example.com"))
        try:
            with received_meta() as seen:
                async with session("memory") as client:
                    await client.send_ping()
                    await client.call_tool("get_order_status", {"order_id": "O-1873"}, meta={"baggage": "own=1"})
        finally:
            context.detach(token)
    finally:
        mcpobs.uninstrument()
        captured.tracer_provider.shutdown()
    sent = dict(seen)
    assert "traceparent" in sent["ping"]
    assert ("baggage" in sent["ping"]) is send
    if send:
        assert "ada%40example.com" in sent["ping"]["baggage"] or "ada@example.com" in sent["ping"]["baggage"]
    assert sent["tools/call"]["baggage"] == "own=1"  # the caller's own, either way


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_over_http_traceparent_also_rides_as_a_header(mcpobs_telemetry, transport):
    server = shop()
    posts: list[dict[str, str]] = []
    app = server.streamable_http_app() if transport == "http" else server.sse_app()
    with received_meta() as seen, serve_http(recording_headers(app, posts)) as base:
        if transport == "http":
            async with streamable_http_client(base + "/mcp") as (read, write, _), ClientSession(read, write) as client:
                await client.initialize()
                await some_calls(client)
        else:
            async with sse_client(base + "/sse") as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                await some_calls(client)
    headers = [p.get("traceparent") for p in posts if p[":method"] == "POST"]
    if transport == "sse" and not inventory.applies(inventory.SSE1_POST):
        # before 1.30 `sse_client` posts with its HTTP client's own `post`: no seam, `_meta` only
        assert headers == [None] * len(seen)
        return
    assert headers == [meta.get("traceparent") for _, meta in seen]
    assert all(headers)


async def test_a_fastmcp_client_carries_the_calls_span_not_its_callers(mcpobs_telemetry, monkeypatch):
    """FastMCP 3's `Client` injects its caller's context; the request carries the call's own span."""
    import fastmcp

    monkeypatch.setattr(trace, "_TRACER_PROVIDER", mcpobs_telemetry.tracer_provider)  # FastMCP asks the global one
    tracer = mcpobs_telemetry.tracer_provider.get_tracer("host")
    with received_meta() as seen, tracer.start_as_current_span("host"):
        async with fastmcp.Client(shop()) as client:
            await client.call_tool("get_order_status", {"order_id": "O-1873"})
            await anyio.sleep(0)
    ((_, meta),) = [(m, meta) for m, meta in seen if m == "tools/call"]
    (call,) = [s for s in client_spans(mcpobs_telemetry) if s.name == "tools/call get_order_status"]
    assert S.OUTCOME in call.attributes  # mcpobs's span, not FastMCP's own
    assert meta["traceparent"] == traceparent_of(call)
    assert [s.name for s in mcpobs_telemetry.spans() if s.kind is SpanKind.CLIENT].count(call.name) == 1
