"""Requests the Streamable HTTP transport refuses before any handler runs, each recorded at its boundary."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp.server.lowlevel import Server
from opentelemetry.trace import SpanKind, StatusCode
from shop import create_server
from transports import serve_http, server_spans

from mcpobs import semconv as S

V = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": V,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
}
HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": V,
}
LEGACY_HEADERS = {k: v for k, v in HEADERS.items() if k != "mcp-protocol-version"}
CALL_HEADERS = {**HEADERS, "mcp-method": "tools/call", "mcp-name": "get_order_status"}


def call(meta: dict[str, Any] | None = ENVELOPE, **arguments: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "get_order_status", "arguments": {"order_id": "O-1873", **arguments}}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}


def unsupported() -> dict[str, Any]:
    return call(meta={**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099-01-01"})


LEGACY_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}

# (case, HTTP method, headers, body, status, JSON-RPC code, boundary, mcp.method.name, span name)
REJECTIONS = [
    (
        "mcp-name mismatch",
        "POST",
        {**CALL_HEADERS, "mcp-name": "other"},
        call(),
        400,
        -32020,
        "transport",
        "tools/call",
        "tools/call",
    ),
    (
        "mcp-method mismatch",
        "POST",
        {**CALL_HEADERS, "mcp-method": "tools/list"},
        call(),
        400,
        -32020,
        "transport",
        "tools/list",
        "tools/list",
    ),
    (
        "version header vs envelope",
        "POST",
        CALL_HEADERS,
        unsupported(),
        400,
        -32020,
        "transport",
        "tools/call",
        "tools/call",
    ),
    (
        "unsupported version",
        "POST",
        {**CALL_HEADERS, "mcp-protocol-version": "2099-01-01"},
        unsupported(),
        400,
        -32022,
        "version",
        "tools/call",
        "tools/call",
    ),
    ("no _meta envelope", "POST", CALL_HEADERS, call(meta=None), 400, -32602, "transport", "tools/call", "tools/call"),
    (
        "bad Host",
        "POST",
        {**CALL_HEADERS, "host": "evil.example"},
        call(),
        421,
        None,
        "transport",
        "tools/call",
        "tools/call",
    ),
    (
        "bad Origin",
        "POST",
        {**CALL_HEADERS, "origin": "http://evil.example"},
        call(),
        403,
        None,
        "transport",
        "tools/call",
        "tools/call",
    ),
    (
        "wrong content type",
        "POST",
        {**CALL_HEADERS, "content-type": "text/plain"},
        call(),
        400,
        None,
        "transport",
        "tools/call",
        "tools/call",
    ),
    (
        "accept lacks event-stream",
        "POST",
        {**CALL_HEADERS, "accept": "application/json"},
        call(),
        406,
        None,
        "transport",
        "tools/call",
        "tools/call",
    ),
    ("parse error", "POST", CALL_HEADERS, b"{not json", 400, -32700, "transport", "tools/call", "tools/call"),
    ("batch", "POST", CALL_HEADERS, [call()], 400, -32600, "transport", "tools/call", "tools/call"),
    (
        "body too large",
        "POST",
        CALL_HEADERS,
        call(padding="x" * 20_000),
        413,
        None,
        "transport",
        "tools/call",
        "tools/call",
    ),
    ("legacy without a session", "POST", LEGACY_HEADERS, LEGACY_LIST, 400, -32600, "transport", S.OTHER, "POST"),
    (
        "legacy unknown session",
        "POST",
        {**LEGACY_HEADERS, "mcp-session-id": "deadbeef"},
        LEGACY_LIST,
        404,
        -32600,
        "transport",
        S.OTHER,
        "POST",
    ),
]


def send(url: str, method: str, headers: Any, body: Any) -> httpx2.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    with httpx2.Client(timeout=10) as http:
        return http.request(method, url, headers=headers, content=content)


def settle(telemetry, count: int) -> list[Any]:
    """Spans end just after the response is sent; give the server thread a moment."""
    deadline = time.monotonic() + 5
    while len(server_spans(telemetry)) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    return server_spans(telemetry)


@pytest.mark.parametrize(
    ("case", "method", "headers", "body", "status", "code", "boundary", "mcp_method", "name"),
    REJECTIONS,
    ids=[r[0] for r in REJECTIONS],
)
def test_each_rejection_is_one_span_at_its_boundary(
    mcpobs_telemetry, case, method, headers, body, status, code, boundary, mcp_method, name
):
    app = create_server().streamable_http_app(max_request_body_size=10_000)
    with serve_http(app) as base:
        response = send(base + "/mcp", method, headers, body)
        assert response.status_code == status
        (span,) = settle(mcpobs_telemetry, 1)
    a = span.attributes
    assert span.name == name
    assert a[S.OUTCOME] == "client_error"
    assert a[S.FAILURE_BOUNDARY] == boundary
    assert a[S.HTTP_RESPONSE_STATUS_CODE] == status
    assert a.get(S.RPC_RESPONSE_STATUS_CODE) == (str(code) if code is not None else None)
    assert a[S.MCP_METHOD_NAME] == mcp_method
    assert a[S.NETWORK_TRANSPORT] == "tcp"
    assert a[S.SERVER_NAME] == "shop"
    assert S.ERROR_TYPE not in a  # the caller's mistake is not the server's error
    assert span.status.status_code is StatusCode.UNSET
    if code == -32022:
        assert a[S.MCP_PROTOCOL_VERSION] == S.OTHER
    counted = {S.OUTCOME: "client_error", S.FAILURE_BOUNDARY: boundary, S.MCP_METHOD_NAME: mcp_method}
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, counted) == 1


def header_bound_server() -> Server:
    """A tool whose `region` argument must be mirrored in an Mcp-Param-Region header."""

    async def list_tools(ctx, params):
        schema = {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}
        return types.ListToolsResult(tools=[types.Tool(name="geo", input_schema=schema)])

    async def call_tool(ctx, params):
        return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])

    return Server("geo", on_list_tools=list_tools, on_call_tool=call_tool)


def test_a_param_header_mismatch_is_recorded_though_the_transport_listed_tools_to_check_it(mcpobs_telemetry):
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "geo", "arguments": {"region": "eu"}, "_meta": ENVELOPE},
    }
    headers = {**HEADERS, "mcp-method": "tools/call", "mcp-name": "geo", "mcp-param-region": "us"}
    with serve_http(header_bound_server().streamable_http_app()) as base:
        assert send(base + "/mcp", "POST", headers, body).status_code == 400
        spans = settle(mcpobs_telemetry, 2)
    # the transport ran tools/list through the server to read the schema; that span is its own
    rejected = [s for s in spans if s.attributes[S.MCP_METHOD_NAME] == "tools/call"]
    (span,) = rejected
    assert span.attributes[S.RPC_RESPONSE_STATUS_CODE] == "-32020"
    assert span.attributes[S.FAILURE_BOUNDARY] == "transport"


def test_a_handler_error_with_an_error_status_is_recorded_once_by_the_middleware(mcpobs_telemetry):
    body = {"jsonrpc": "2.0", "id": 1, "method": "bogus/method", "params": {"_meta": ENVELOPE}}
    with serve_http(create_server().streamable_http_app()) as base:
        response = send(base + "/mcp", "POST", {**HEADERS, "mcp-method": "bogus/method"}, body)
        assert response.status_code == 404  # -32601 maps to 404, but the server chain produced it
        (span,) = settle(mcpobs_telemetry, 1)
    assert span.attributes[S.FAILURE_BOUNDARY] == "capability"
    assert S.HTTP_RESPONSE_STATUS_CODE not in span.attributes
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, {S.FAILURE_BOUNDARY: "transport"}) == 0


def test_a_successful_request_adds_no_span_at_the_boundary(mcpobs_telemetry):
    with serve_http(create_server().streamable_http_app()) as base:
        assert send(base + "/mcp", "POST", CALL_HEADERS, call()).status_code == 200
        (span,) = settle(mcpobs_telemetry, 1)
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
        assert (
            send(base + "/mcp", "POST", {**HEADERS, "mcp-method": "notifications/cancelled"}, note).status_code == 202
        )
        assert len(settle(mcpobs_telemetry, 2)) == 1
    assert span.name == "tools/call get_order_status"
    assert span.attributes[S.OUTCOME] == "ok"
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, {S.FAILURE_BOUNDARY: "transport"}) == 0


def test_after_uninstrument_an_app_built_while_instrumented_records_nothing(mcpobs_telemetry):
    import mcpobs

    app = create_server().streamable_http_app()
    mcpobs.uninstrument()
    with serve_http(app) as base:
        assert send(base + "/mcp", "POST", {**CALL_HEADERS, "host": "evil.example"}, call()).status_code == 421
        time.sleep(0.1)
    assert not mcpobs_telemetry.spans()


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_refused_sdk_client_and_the_rejection_are_one_trace(mcpobs_telemetry, mode):
    from mcp import Client
    from mcp.server.transport_security import TransportSecuritySettings

    only_the_public_name = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=["shop.example"], allowed_origins=[]
    )
    app = create_server().streamable_http_app(transport_security=only_the_public_name)
    expected = {"auto": ["server/discover", "initialize"], "legacy": ["initialize"]}[mode]  # auto falls back
    with serve_http(app) as base:
        with pytest.raises(Exception, match=r"unhandled errors|error response"):
            async with Client(base + "/mcp", mode=mode):
                pass
        rejections = settle(mcpobs_telemetry, len(expected))
    sent = {s.context.span_id: s for s in mcpobs_telemetry.spans() if s.kind is SpanKind.CLIENT}
    assert sorted(s.name for s in sent.values()) == sorted(expected)
    assert len(rejections) == len(expected)
    for rejected in rejections:
        assert rejected.attributes[S.HTTP_RESPONSE_STATUS_CODE] == 421
        parent = sent[rejected.parent.span_id]  # each refusal sits under the request that was refused
        assert rejected.context.trace_id == parent.context.trace_id
        assert parent.status.status_code is StatusCode.ERROR
        # 2026 requests say their method in a header; the legacy handshake does not
        assert rejected.name == ("server/discover" if parent.name == "server/discover" else "POST")


def test_a_refusal_for_want_of_capacity_is_a_server_error_at_the_boundary(mcpobs_telemetry):
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    with serve_http(create_server().streamable_http_app(max_sessions=1)) as base:
        assert send(base + "/mcp", "POST", LEGACY_HEADERS, initialize).status_code == 200
        assert send(base + "/mcp", "POST", LEGACY_HEADERS, initialize).status_code == 503
        spans = settle(mcpobs_telemetry, 2)
    (refused,) = [s for s in spans if S.HTTP_RESPONSE_STATUS_CODE in s.attributes]
    assert refused.attributes[S.OUTCOME] == "server_error"
    assert refused.attributes[S.ERROR_TYPE] == "503"
    assert refused.status.status_code is StatusCode.ERROR
    counted = {S.OUTCOME: "server_error", S.FAILURE_BOUNDARY: "transport", S.ERROR_TYPE: "503"}
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, counted) == 1


# -- health probes are not MCP requests -------------------------------------------------------------

PROBES = [
    ("kubelet httpGet", "GET", {"user-agent": "kube-probe/1.31", "accept": "*/*", "connection": "close"}),
    ("a load balancer's check", "GET", {"user-agent": "ELB-HealthChecker/2.0"}),
    ("curl", "GET", {"user-agent": "curl/8.5.0", "accept": "*/*"}),
    ("curl -I", "HEAD", {"user-agent": "curl/8.5.0", "accept": "*/*"}),
    ("a browser", "GET", {"accept": "text/html,application/xhtml+xml,*/*;q=0.8"}),
]
"""Requests as orchestrators, load balancers and people send them to `/mcp`: none is an MCP message."""

MISCONFIGURED = [
    ("a POST whose Accept lacks event-stream", "POST", {**CALL_HEADERS, "accept": "application/json"}, 406),
    ("a stream opened with a stale session", "GET", {"accept": "text/event-stream", "mcp-session-id": "dead"}, 404),
    ("a stream opened without a session", "GET", {"accept": "text/event-stream"}, 400),
    ("a DELETE without a session", "DELETE", {"accept": "application/json, text/event-stream"}, 400),
]
"""A real client's transport refusals: each is still a `client_error` at the `transport` boundary."""


def probed_app(framework: str) -> Any:
    """The framework's app, with a readiness route that says "not ready" (503), as one does while starting."""
    from starlette.responses import PlainTextResponse

    async def not_ready(request: Any) -> Any:
        return PlainTextResponse("starting", status_code=503)

    if framework == "fastmcp":
        from fastmcp_shop import create_server as create_fastmcp

        server = create_fastmcp()
        server.custom_route("/healthz", methods=["GET"])(not_ready)
        return server.http_app()
    server = create_server()
    server.custom_route("/healthz", methods=["GET"])(not_ready)
    return server.streamable_http_app()


@pytest.mark.parametrize("framework", ["mcpserver", "fastmcp"])
def test_health_probes_are_not_failures_and_a_misconfigured_clients_refusals_are(mcpobs_telemetry, framework):
    with serve_http(probed_app(framework)) as base:
        for _ in range(3):  # every few seconds, from each prober
            for case, method, headers in PROBES:
                response = send(base + "/mcp", method, headers, b"")
                assert response.status_code >= 400, (case, response.status_code)  # refused, as before
            assert send(base + "/healthz", "GET", {"user-agent": "kube-probe/1.31"}, b"").status_code == 503
            assert send(base + "/healthz", "HEAD", {}, b"").status_code == 503
            assert send(base + "/nowhere", "GET", {}, b"").status_code == 404
        for case, method, headers, status in MISCONFIGURED:
            body = call() if method == "POST" else b""
            assert send(base + "/mcp", method, headers, body).status_code == status, case
        spans = settle(mcpobs_telemetry, len(MISCONFIGURED))
    assert sorted(s.attributes[S.HTTP_RESPONSE_STATUS_CODE] for s in spans) == sorted(m[3] for m in MISCONFIGURED)
    for span in spans:
        assert span.attributes[S.OUTCOME] == "client_error"
        assert span.attributes[S.FAILURE_BOUNDARY] == "transport"
    # the error ratio's numerator and the failures `show --failures` lists: the client's refusals only
    requests = S.SERVER_REQUESTS.name
    assert mcpobs_telemetry.total(requests, {S.OUTCOME: "client_error"}) == len(MISCONFIGURED)
    assert mcpobs_telemetry.total(requests, {S.OUTCOME: "server_error"}) == 0
    assert mcpobs_telemetry.total(requests) == len(MISCONFIGURED)  # and the probes are no traffic either
