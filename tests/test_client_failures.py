"""The client's half of a failure: outages, HTTP refusals, access refused, where it stopped.

Every server here is real: a closed loopback port, a server stopped mid-session, a tiny ASGI
app answering one HTTP status, a bearer-protected `MCPServer`, a real server behind a proxy
that answers the handshake the way older or broken servers do.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from opentelemetry.trace import SpanKind, StatusCode
from processes import free_port
from shop import create_server
from transports import client_spans, send_raw, serve_http

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

DURATION = S.CLIENT_OPERATION_DURATION.name
REQUESTS = S.CLIENT_REQUESTS.name


def outcome_of(span: Any) -> tuple[Any, ...]:
    a = span.attributes
    return (a[S.OUTCOME], a.get(S.FAILURE_BOUNDARY), a.get(S.ERROR_TYPE), a.get(S.HTTP_RESPONSE_STATUS_CODE))


async def connect_and_list(url: str, **options: Any) -> BaseException:
    with pytest.raises(BaseException) as raised:
        async with Client(url, **options) as client:
            await client.list_tools()
    return raised.value


# -- outages ------------------------------------------------------------------------------------


async def test_a_refused_connection_is_an_outage_not_a_cancellation(mcpobs_telemetry):
    await connect_and_list(f"http://127.0.0.1:{free_port()}/mcp")
    (probe,) = client_spans(mcpobs_telemetry, "server/discover")
    assert outcome_of(probe) == ("server_error", "transport", "ConnectError", None)
    assert probe.status.status_code is StatusCode.ERROR
    assert probe.events[0].attributes["exception.type"].endswith("ConnectError")
    failed = {S.OUTCOME: "server_error", S.FAILURE_BOUNDARY: "transport", S.ERROR_TYPE: "ConnectError"}
    assert mcpobs_telemetry.total(REQUESTS, failed) == 1
    assert mcpobs_telemetry.total(REQUESTS, {S.OUTCOME: "cancelled"}) == 0
    assert mcpobs_telemetry.total(DURATION) == 0  # no answer came: no latency sample


async def test_a_server_gone_mid_session_is_an_outage(mcpobs_telemetry):
    server = create_server()
    with serve_http(server.streamable_http_app()) as base_url:
        client = Client(base_url + "/mcp", mode="legacy")
        await client.__aenter__()
    # the server has stopped; the session is still open on this side
    with pytest.raises(BaseException):  # noqa: B017  (the SDK's task group tears down)
        try:
            await client.list_tools()
        finally:
            await client.__aexit__(None, None, None)
    (listing,) = client_spans(mcpobs_telemetry, "tools/list")
    assert outcome_of(listing)[:2] == ("stopped", "transport")  # the connection closed under it: the server stopped
    assert listing.status.status_code is StatusCode.ERROR
    assert mcpobs_telemetry.total(REQUESTS, {S.MCP_METHOD_NAME: "tools/list", S.OUTCOME: "cancelled"}) == 0


async def test_a_stdio_server_that_dies_mid_call_stopped_the_call(mcpobs_telemetry):
    script = "import os\nfrom mcp.server.mcpserver import MCPServer\ns = MCPServer('die')\n"
    script += "@s.tool()\ndef die() -> str:\n    os._exit(3)\ns.run()\n"
    with pytest.raises(BaseException):  # noqa: B017
        async with Client(StdioServerParameters(command=sys.executable, args=["-c", script])) as client:
            await client.list_tools()  # a client names only the tools it listed
            await client.call_tool("die", {})
    (call,) = client_spans(mcpobs_telemetry, "tools/call die")
    assert outcome_of(call) == ("stopped", "transport", "server_stopped", None)  # the server stopped under it
    assert mcpobs_telemetry.total(DURATION, {S.MCP_METHOD_NAME: "tools/call"}) == 0


class FailingAuth(httpx2.Auth):
    """An OAuth flow that cannot reach its authorization server."""

    def auth_flow(self, request: Any) -> Any:
        from mcp.client.auth import OAuthFlowError

        raise OAuthFlowError("the authorization server did not answer")
        yield request  # pragma: no cover


async def test_an_oauth_flow_that_raises_is_an_outage(mcpobs_telemetry):
    with serve_http(create_server().streamable_http_app()) as base_url:
        async with httpx2.AsyncClient(auth=FailingAuth()) as http:
            with pytest.raises(BaseException):  # noqa: B017
                async with Client(streamable_http_client(base_url + "/mcp", http_client=http)):
                    pass
    (probe,) = client_spans(mcpobs_telemetry, "server/discover")
    assert outcome_of(probe) == ("server_error", "transport", "OAuthFlowError", None)


# -- HTTP refusals ------------------------------------------------------------------------------


def answering(status: int, seen: list[dict[str, str]] | None = None) -> Any:
    """An ASGI app that answers every request with `status` (and notes the headers it got)."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if seen is not None:
            seen.append({k.decode(): v.decode() for k, v in scope["headers"]})
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"refused"})

    return app


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (401, ("client_error", "access", "401", 401)),
        (403, ("client_error", "access", "403", 403)),
        (404, ("client_error", "transport", "404", 404)),
        (502, ("server_error", "transport", "502", 502)),
        (503, ("server_error", "transport", "503", 503)),
    ],
)
async def test_http_refusals_are_told_apart_by_their_status(mcpobs_telemetry, status, expected):
    with serve_http(answering(status)) as base_url:
        await connect_and_list(base_url + "/mcp", mode="legacy")
    (handshake,) = client_spans(mcpobs_telemetry, "initialize")
    assert outcome_of(handshake) == expected
    assert type(handshake.attributes[S.HTTP_RESPONSE_STATUS_CODE]) is int
    assert S.RPC_RESPONSE_STATUS_CODE not in handshake.attributes  # the SDK's stand-in code is not the server's
    assert handshake.status.status_code is StatusCode.ERROR
    outcome, boundary, error_type, _ = expected
    counted = {S.OUTCOME: outcome, S.FAILURE_BOUNDARY: boundary, S.ERROR_TYPE: error_type}
    assert mcpobs_telemetry.total(REQUESTS, {S.MCP_METHOD_NAME: "initialize", **counted}) == 1


# -- access refused -----------------------------------------------------------------------------


class StaticVerifier:
    async def verify_token(self, token: str) -> AccessToken | None:
        return AccessToken(token=token, client_id="desk", scopes=[]) if token == "staff-token" else None


def protected_server(scopes: list[str] | None = None) -> MCPServer:
    settings = AuthSettings(
        issuer_url="https://auth.billing.invalid",
        resource_server_url="http://127.0.0.1/mcp",
        required_scopes=scopes,
        validate_token_resource=False,
    )
    server = MCPServer("billing", auth=settings, token_verifier=StaticVerifier())

    @server.tool()
    def balance() -> str:
        return "42"

    return server


@pytest.mark.parametrize(
    ("token", "scopes", "status"),
    [("stolen", None, 401), ("staff-token", ["billing:write"], 403)],
    ids=["not-authenticated", "insufficient-scope"],
)
async def test_a_bearer_refusal_is_access_refused_on_both_sides(mcpobs_telemetry, token, scopes, status):
    with serve_http(protected_server(scopes).streamable_http_app()) as base_url:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
            with pytest.raises(BaseException):  # noqa: B017
                async with Client(streamable_http_client(base_url + "/mcp", http_client=http), mode="legacy"):
                    pass
    (handshake,) = client_spans(mcpobs_telemetry, "initialize")
    assert outcome_of(handshake) == ("client_error", "access", str(status), status)
    # a legacy initialize carries no Mcp-Method header: the refusal is named by its HTTP method
    (refused,) = mcpobs_telemetry.spans_named("POST", SpanKind.SERVER)
    assert refused.attributes[S.OUTCOME] == "client_error"
    assert refused.attributes[S.FAILURE_BOUNDARY] == "access"
    assert refused.attributes[S.HTTP_RESPONSE_STATUS_CODE] == status
    assert refused.parent.span_id == handshake.context.span_id  # the traceparent header rode along
    server_counted = {S.OUTCOME: "client_error", S.FAILURE_BOUNDARY: "access"}
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, server_counted) == 1
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, {S.OUTCOME: "server_error"}) == 0


def guarded_shop() -> MCPServer:
    server = MCPServer("billing")

    @server.tool()
    def refund(order_id: str) -> str:
        raise PermissionError("this caller may not issue refunds")

    @server.tool()
    def export() -> str:
        with open("/proc/1/mem", "rb"):  # the OS refuses the server itself: a bug, not the caller refused
            return "done"

    return server


async def test_a_tool_refusing_its_caller_is_access_refused_not_a_server_bug(mcpobs_telemetry):
    async with Client(guarded_shop()) as client:
        assert (await client.call_tool("refund", {"order_id": "O-1"})).is_error
        assert (await client.call_tool("export", {})).is_error
    (refund,) = mcpobs_telemetry.spans_named("tools/call refund", SpanKind.SERVER)
    assert refund.attributes[S.OUTCOME] == "client_error"
    assert refund.attributes[S.FAILURE_BOUNDARY] == "access"
    assert refund.status.status_code is StatusCode.UNSET
    (export,) = mcpobs_telemetry.spans_named("tools/call export", SpanKind.SERVER)
    assert export.attributes[S.OUTCOME] == "server_error"
    assert export.attributes[S.FAILURE_BOUNDARY] == "handler"


# -- a Client built on a transport object --------------------------------------------------------


async def test_a_client_on_a_transport_object_has_network_labels_and_sends_traceparent(mcpobs_telemetry):
    seen: list[dict[str, str]] = []
    with serve_http(answering(503, seen)) as base_url:
        port = int(base_url.rsplit(":", 1)[1])
        async with httpx2.AsyncClient() as http:
            with pytest.raises(BaseException):  # noqa: B017
                async with Client(streamable_http_client(base_url + "/mcp", http_client=http)):
                    pass
    (probe,) = client_spans(mcpobs_telemetry, "server/discover")
    assert probe.attributes[S.SERVER_ADDRESS] == "127.0.0.1"
    assert probe.attributes[S.SERVER_PORT] == port
    assert probe.attributes[S.NETWORK_TRANSPORT] == "tcp"
    assert probe.attributes[S.NETWORK_PROTOCOL_NAME] == "http"
    # the host's HTTP client may speak any version: the one it spoke is learned from the response
    assert probe.attributes[S.NETWORK_PROTOCOL_VERSION] == "1.1"
    assert seen and all("traceparent" in headers for headers in seen)
    assert f"{probe.context.trace_id:032x}" in seen[0]["traceparent"]


# -- negotiation ---------------------------------------------------------------------------------


def handshake_proxy(app: Any, discover: dict[str, Any] | None, initialize_version: str | None = None) -> Any:
    """`app` behind a proxy answering `server/discover` with `discover` (and, optionally, every
    `initialize` with `initialize_version`), the way older or broken servers do."""

    async def proxy(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = json.loads(body)
        answer = None
        if request.get("method") == "server/discover" and discover is not None:
            answer = discover
        elif request.get("method") == "initialize" and initialize_version is not None:
            answer = {
                "protocolVersion": initialize_version,
                "capabilities": {},
                "serverInfo": {"name": "odd", "version": "0.1"},
            }
        if answer is not None:
            reply = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": answer}).encode()
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": reply})
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await app(scope, replay, send)

    return proxy


OLDER_ONLY = {
    "supportedVersions": ["2025-06-18", "2025-11-25"],
    "capabilities": {},
    "serverInfo": {"name": "go-style", "version": "1.0"},
}


@pytest.mark.parametrize("discover", [OLDER_ONLY, {}], ids=["older-revisions-only", "empty"])
async def test_a_discover_answer_the_client_cannot_use_is_a_fallback(mcpobs_telemetry, discover):
    server = create_server()
    with serve_http(handshake_proxy(server.streamable_http_app(), discover)) as base_url:
        async with Client(base_url + "/mcp") as client:
            await client.list_tools()
    (probe,) = client_spans(mcpobs_telemetry, "server/discover")
    (handshake,) = client_spans(mcpobs_telemetry, "initialize")
    assert handshake.attributes[S.SESSION_FALLBACK] is True
    assert probe.attributes[S.SESSION_FALLBACK] is True
    assert handshake.attributes[S.OUTCOME] == "ok"


async def test_a_probe_never_answered_stays_a_timeout_though_the_client_falls_back(mcpobs_telemetry, monkeypatch):
    """The SDK gives up `server/discover` (10 s; 0.3 s here) and falls back to `initialize`: no
    refusal said "older revision", so the probe is not `ok` (CI saw it while gunicorn's workers booted)."""
    import mcp.client.session

    monkeypatch.setattr(mcp.client.session, "DISCOVER_TIMEOUT_SECONDS", 0.3)
    app = create_server().streamable_http_app()

    async def slow_probe(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"mcp-method") == b"server/discover":
            await anyio.sleep(1.0)  # long after the client stopped waiting
        await app(scope, receive, send)

    with serve_http(slow_probe) as base_url:
        async with Client(base_url + "/mcp") as client:
            await client.list_tools()
    (probe,) = client_spans(mcpobs_telemetry, "server/discover")
    (handshake,) = client_spans(mcpobs_telemetry, "initialize")
    assert outcome_of(probe)[:3] == ("server_error", None, S.TIMEOUT)
    assert probe.attributes[S.SESSION_FALLBACK] is True
    assert probe.status.status_code is StatusCode.ERROR
    assert (handshake.attributes[S.OUTCOME], handshake.attributes[S.SESSION_FALLBACK]) == ("ok", True)
    failed = {S.MCP_METHOD_NAME: "server/discover", S.OUTCOME: "server_error", S.ERROR_TYPE: S.TIMEOUT}
    assert mcpobs_telemetry.total(REQUESTS, failed) == 1


async def test_a_failed_legacy_negotiation_is_not_an_ok_initialize(mcpobs_telemetry):
    server = create_server()
    app = handshake_proxy(server.streamable_http_app(), None, initialize_version="1999-01-01")
    with serve_http(app) as base_url, pytest.raises(BaseException):  # noqa: B017
        async with Client(base_url + "/mcp", mode="legacy"):
            pass
    (handshake,) = client_spans(mcpobs_telemetry, "initialize")
    assert outcome_of(handshake)[:2] == ("client_error", "version")
    assert handshake.status.status_code is StatusCode.ERROR
    assert mcpobs_telemetry.total(REQUESTS, {S.MCP_METHOD_NAME: "initialize", S.OUTCOME: "ok"}) == 0


# -- boundaries and samples ----------------------------------------------------------------------


async def test_every_failed_client_span_says_where_it_stopped(mcpobs_telemetry):
    async with Client(create_server(), mode="legacy") as client:
        await client.call_tool("check_stock", {"sku": "nope"})  # not a tool of this server
        with pytest.raises(MCPError):
            await send_raw(client, "shop/unknown", {})
        with pytest.raises(MCPError):
            await client.get_prompt("no_such_prompt")
    (tool,) = client_spans(mcpobs_telemetry, "tools/call")  # never listed: not named
    # an isError result on the wire; the server's verdict in its `_meta` says whose mistake it was
    assert outcome_of(tool)[:2] == ("client_error", "discovery")
    assert tool.attributes[S.OUTCOME_SOURCE] == "server"
    (unknown,) = client_spans(mcpobs_telemetry, "_OTHER")
    assert outcome_of(unknown) == ("client_error", "capability", "-32601", None)
    # MCPServer answers an unknown prompt with a plain error (code 0 here), and this client never
    # listed the prompts: it can only say what the wire said; the server's span says whose mistake it was
    (asked,) = client_spans(mcpobs_telemetry, "prompts/get")  # never listed: not named
    assert outcome_of(asked)[:2] == ("server_error", "handler")
    assert S.OUTCOME_SOURCE not in asked.attributes
    (answered,) = mcpobs_telemetry.spans_named("prompts/get", SpanKind.SERVER)
    assert answered.attributes[S.OUTCOME] == "client_error"
    assert answered.attributes[S.FAILURE_BOUNDARY] == "discovery"


async def test_a_listen_stream_is_not_a_latency_sample(mcpobs_telemetry):
    async with Client(create_server()) as client, client.listen(tools_list_changed=True):
        await anyio.sleep(0.05)
    (stream,) = client_spans(mcpobs_telemetry, "subscriptions/listen")
    assert stream.attributes[S.OUTCOME] == "ok"
    assert mcpobs_telemetry.total(DURATION, {S.MCP_METHOD_NAME: "subscriptions/listen"}) == 0
    assert mcpobs_telemetry.total(REQUESTS, {S.MCP_METHOD_NAME: "subscriptions/listen", S.OUTCOME: "ok"}) == 1


# -- requests a server sends its client ------------------------------------------------------


async def test_a_servers_request_to_its_client_has_version_session_network_and_durations(mcpobs_telemetry):
    from test_client_spans import slow_human, some_roots

    with serve_http(create_server().streamable_http_app()) as base_url:
        client = Client(
            base_url + "/mcp", mode="legacy", elicitation_callback=slow_human, list_roots_callback=some_roots
        )
        async with client:
            await client.call_tool("approve_refund", {"order_id": "O-1873"})
    network = {S.NETWORK_TRANSPORT: "tcp", S.NETWORK_PROTOCOL_NAME: "http"}
    for method in ("elicitation/create", "roots/list"):
        (asked,) = mcpobs_telemetry.spans_named(method, SpanKind.CLIENT)  # the server, asking
        (answered,) = mcpobs_telemetry.spans_named(method, SpanKind.SERVER)  # the client, answering
        for span in (asked, answered):
            assert span.attributes[S.MCP_PROTOCOL_VERSION] == "2025-11-25"
            assert {k: span.attributes[k] for k in network} == network
        assert answered.attributes[S.MCP_SESSION_ID]  # the legacy HTTP session's, as the client learned it
        labels = {S.MCP_METHOD_NAME: method, S.MCP_PROTOCOL_VERSION: "2025-11-25", **network}
        assert mcpobs_telemetry.total(DURATION, labels) == 1  # the server sent it: its client duration
        assert mcpobs_telemetry.total(S.SERVER_OPERATION_DURATION.name, labels) == 1  # the client answered it


# -- the client's session line -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "via", "server"),
    [("auto", "discover", "shop/1.0.0"), ("legacy", "initialize", "shop/1.0.0"), ("2026-07-28", "pinned", "?")],
)
async def test_each_client_session_logs_one_line_saying_what_it_connected_to(
    mcpobs_telemetry, caplog, mode, via, server
):
    caplog.set_level("INFO", logger="mcpobs.session.client")
    async with Client(create_server(), mode=mode):
        pass
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("mcp client session")]
    assert len(lines) == 1
    (line,) = lines
    assert f"server={server} " in line
    assert f"via={via} " in line
    assert "protocol=2026-07-28" in line or (mode == "legacy" and "protocol=2025-11-25" in line)
    assert "capabilities=[" in line


async def test_a_client_span_carries_the_fingerprints_of_the_tool_it_listed(mcpobs_telemetry):
    async with Client(create_server()) as client:
        await client.list_tools()
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
    (sent,) = client_spans(mcpobs_telemetry, "tools/call get_order_status")
    (served,) = mcpobs_telemetry.spans_named("tools/call get_order_status", SpanKind.SERVER)
    for name in (S.TOOL_SCHEMA_FINGERPRINT, S.TOOL_CONTRACT_FINGERPRINT):
        assert sent.attributes[name] == served.attributes[name]
    assert S.TOOL_SCHEMA_STALE not in served.attributes  # only the server knows what it serves now
