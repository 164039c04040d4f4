"""A bare `ClientSession` on a transport the host opened itself (as llama-index and openai-agents do).

No `Client` tells mcpobs where the server is: the transport it was built on does. Its spans
carry the same connection attributes as a `Client`'s, its metrics the same labels, over HTTP
it sends `traceparent` as a header, and its life is one `mcp.client.session.duration` sample.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client._memory import InMemoryTransport
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from opentelemetry.trace import SpanKind
from shop import create_server
from transports import read_spans, serve_http, stdio_params

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

HTTP = {S.NETWORK_TRANSPORT: "tcp", S.NETWORK_PROTOCOL_NAME: "http", S.NETWORK_PROTOCOL_VERSION: "1.1"}


async def _use(read: Any, write: Any) -> None:
    async with ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        await session.call_tool("get_order_status", {"order_id": "O-1873"})


def _session_durations(telemetry: Any) -> list[dict[str, Any]]:
    data = telemetry.reader.get_metrics_data()
    found = []
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == S.CLIENT_SESSION_DURATION.name:
                    found += [dict(p.attributes) for p in metric.data.data_points for _ in range(p.count)]
    return found


@pytest.mark.parametrize("own_http_client", [False, True], ids=["sdk-http-client", "host-http-client"])
async def test_a_bare_session_over_streamable_http_has_the_connection_attributes(mcpobs_telemetry, own_http_client):
    server = create_server()
    headers_seen: list[str | None] = []

    async def note_traceparent(request: Any) -> None:
        headers_seen.append(request.headers.get("traceparent"))

    with serve_http(server.streamable_http_app()) as base:
        url = base + "/mcp"
        port = int(base.rsplit(":", 1)[1])
        where = {S.SERVER_ADDRESS: "127.0.0.1", S.SERVER_PORT: port}
        if own_http_client:
            async with (
                httpx2.AsyncClient(event_hooks={"request": [note_traceparent]}) as http,
                streamable_http_client(url, http_client=http) as (read, write),
            ):
                await _use(read, write)
        else:
            async with streamable_http_client(url) as (read, write):
                await _use(read, write)
    spans = [s for s in mcpobs_telemetry.spans() if s.kind is SpanKind.CLIENT]
    assert {s.name for s in spans} >= {"initialize", "tools/list", "tools/call get_order_status"}
    for span in spans:
        assert {k: span.attributes.get(k) for k in {**HTTP, **where}} == {**HTTP, **where}, span.name
    (call,) = [s for s in spans if s.name == "tools/call get_order_status"]
    (served,) = mcpobs_telemetry.spans_named("tools/call get_order_status", SpanKind.SERVER)
    assert served.parent is not None and served.parent.span_id == call.context.span_id
    labels = {S.MCP_METHOD_NAME: "tools/call", **HTTP, **where}
    assert mcpobs_telemetry.total(S.CLIENT_OPERATION_DURATION.name, labels) == 1
    (session,) = _session_durations(mcpobs_telemetry)
    assert {k: session.get(k) for k in {**HTTP, **where}} == {**HTTP, **where}
    if own_http_client:  # the header rides on every request sent in a span (the handshake's notification: none)
        assert sum(1 for h in headers_seen if h and h.startswith("00-")) >= 3


async def test_a_bare_session_over_stdio_is_a_pipe_with_a_session_duration(mcpobs_telemetry, tmp_path: Path):
    spans_file = tmp_path / "spans.jsonl"
    async with stdio_client(stdio_params(spans_file)) as (read, write):
        await _use(read, write)
    (call,) = mcpobs_telemetry.spans_named("tools/call get_order_status", SpanKind.CLIENT)
    assert call.attributes[S.NETWORK_TRANSPORT] == "pipe"
    (session,) = _session_durations(mcpobs_telemetry)
    assert session[S.NETWORK_TRANSPORT] == "pipe"
    served = [s for s in read_spans(spans_file) if s["name"] == "tools/call get_order_status"]
    assert served and served[0]["parent_id"] == f"{call.context.span_id:016x}"


async def test_a_bare_session_in_memory_shares_its_servers_catalog_and_records_its_life(mcpobs_telemetry):
    server = create_server()
    async with InMemoryTransport(server) as (read, write):
        await _use(read, write)
    async with InMemoryTransport(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()  # lists nothing: the first session's listing names its calls
        await session.call_tool("get_order_status", {"order_id": "O-7144"})
    assert len(mcpobs_telemetry.spans_named("tools/call get_order_status", SpanKind.CLIENT)) == 2
    assert len(_session_durations(mcpobs_telemetry)) == 2


async def test_a_client_on_a_stdio_transport_object_is_a_pipe(mcpobs_telemetry, tmp_path: Path):
    """openai-agents builds `Client(stdio_client(params))`: the command line it spawns says stdio."""
    from mcp import Client

    async with Client(stdio_client(stdio_params(tmp_path / "spans.jsonl"))) as client:
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
    (call,) = mcpobs_telemetry.spans_named("tools/call get_order_status", SpanKind.CLIENT)
    assert call.attributes[S.NETWORK_TRANSPORT] == "pipe"
    (session,) = _session_durations(mcpobs_telemetry)
    assert session[S.NETWORK_TRANSPORT] == "pipe"
