"""The 1.x client's half of a failure: outages and HTTP refusals, told apart as on 2.3.

mcp 1.x raises an HTTP error status, or a POST that cannot connect, in its transport's own task,
which tears the transport down: the caller's request is cancelled under it. mcpobs records the
outage or the status, never a cancellation the caller did not make.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import clients
import pytest
from clients import client_spans, serve_http, shop, stdio1
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from opentelemetry.trace import StatusCode

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

DURATION = S.CLIENT_OPERATION_DURATION.name
REQUESTS = S.CLIENT_REQUESTS.name


def outcome_of(span: Any) -> tuple[Any, ...]:
    a = span.attributes
    return (a[S.OUTCOME], a.get(S.FAILURE_BOUNDARY), a.get(S.ERROR_TYPE), a.get(S.HTTP_RESPONSE_STATUS_CODE))


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def initialize_at(url: str) -> BaseException:
    with pytest.raises(BaseException) as raised:
        async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as client:
            await client.initialize()
    return raised.value


async def test_a_refused_connection_is_an_outage_not_a_cancellation(mcpobs_telemetry):
    await initialize_at(f"http://127.0.0.1:{closed_port()}/mcp")
    (handshake,) = client_spans(mcpobs_telemetry, "initialize")
    assert outcome_of(handshake) == ("server_error", "transport", "ConnectError", None)
    assert handshake.status.status_code is StatusCode.ERROR
    assert handshake.events[0].attributes["exception.type"].endswith("ConnectError")
    failed = {S.OUTCOME: "server_error", S.FAILURE_BOUNDARY: "transport", S.ERROR_TYPE: "ConnectError"}
    assert mcpobs_telemetry.total(REQUESTS, failed) == 1
    assert mcpobs_telemetry.total(REQUESTS, {S.OUTCOME: "cancelled"}) == 0
    assert mcpobs_telemetry.total(DURATION) == 0  # no answer came: no latency sample


def answering(status: int) -> Any:
    """An ASGI app that answers every request with `status`."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
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
    with serve_http(answering(status)) as base:
        await initialize_at(base + "/mcp")
    (handshake,) = client_spans(mcpobs_telemetry, "initialize")
    assert outcome_of(handshake) == expected
    assert handshake.status.status_code is StatusCode.ERROR
    assert mcpobs_telemetry.total(REQUESTS, {S.OUTCOME: "cancelled"}) == 0


async def test_a_server_gone_mid_session_is_an_outage(mcpobs_telemetry):
    server = subprocess.Popen(
        [sys.executable, str(Path(clients.__file__).parent / "clients_stdio1.py"), "http"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{server.stdout.readline().strip()}/mcp"
        with pytest.raises(BaseException):  # noqa: B017  (the SDK's task group tears down)
            async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as client:
                await client.initialize()
                server.kill()
                server.wait(10)
                await client.list_tools()
    finally:
        server.kill()
        server.wait(10)
    (listing,) = client_spans(mcpobs_telemetry, "tools/list")
    assert outcome_of(listing)[:2] == ("server_error", "transport")
    assert listing.status.status_code is StatusCode.ERROR
    assert mcpobs_telemetry.total(REQUESTS, {S.MCP_METHOD_NAME: "tools/list", S.OUTCOME: "cancelled"}) == 0


async def test_a_stdio_server_that_dies_mid_call_stopped_the_call(mcpobs_telemetry):
    async with stdio_client(stdio1("die")) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        await client.list_tools()
        with pytest.raises(Exception) as raised:
            await client.call_tool("die", {})
        assert getattr(getattr(raised.value, "error", None), "code", None) == -32000
    (call,) = client_spans(mcpobs_telemetry, "tools/call die")
    assert outcome_of(call) == ("stopped", "transport", "server_stopped", None)  # the server stopped under it
    assert mcpobs_telemetry.total(DURATION, {S.MCP_METHOD_NAME: "tools/call"}) == 0
    (session,) = mcpobs_telemetry.points(S.CLIENT_SESSION_DURATION.name)
    assert session.attributes[S.NETWORK_TRANSPORT] == "pipe"


async def test_other_requests_in_flight_when_the_transport_fails_are_outages_too(mcpobs_telemetry):
    """A 1.x transport whose POST fails tears every request on it down, not only that one."""
    server = shop()

    @server.tool()
    async def hold() -> str:
        """Answers after the other call has gone out."""
        await anyio.sleep(1)
        return "held"

    app = server.streamable_http_app()

    async def refusing_the_second_call(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            body = b""
            while True:
                message = await receive()
                body += message.get("body", b"")
                if not message.get("more_body"):
                    break
            if b'"refuse_me"' in body:
                await answering(503)(scope, receive, send)
                return

            replayed = False

            async def replay() -> Any:
                nonlocal replayed
                if replayed:
                    return await receive()  # then what the connection says (its disconnect)
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}

            await app(scope, replay, send)
            return
        await app(scope, receive, send)

    with serve_http(refusing_the_second_call) as base, pytest.raises(BaseException):  # noqa: B017
        async with streamable_http_client(base + "/mcp") as (read, write, _), ClientSession(read, write) as client:
            await client.initialize()
            await client.list_tools()
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "hold", {})
                await anyio.sleep(0.2)
                await client.call_tool("refuse_me", {})
    (held,) = client_spans(mcpobs_telemetry, "tools/call hold")
    (refused,) = client_spans(mcpobs_telemetry, "tools/call")
    assert outcome_of(refused) == ("server_error", "transport", "503", 503)
    assert outcome_of(held) == ("server_error", "transport", "HTTPStatusError", None)
    assert mcpobs_telemetry.total(REQUESTS, {S.OUTCOME: "cancelled"}) == 0
