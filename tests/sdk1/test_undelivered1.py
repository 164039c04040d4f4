"""A reply that could not be written is never `ok`, on mcp 1.x too (issue 50).

A FastMCP 1 tool logs a large message to its caller (on the request's own event stream, which fills
the connection's buffers) and finishes at once; its client, in a 2025-11-25 session, reads the
response's first bytes and leaves while the answer waits to be written behind the log message. The 1.x SDK answers
through the session's transport, in a task of its own: the SERVER span used to end `ok` where the
responder answered. Now it ends with the POST's response: `cancelled`, `error.type=reply_undelivered`.
Over HTTP+SSE (`sse_app`) the POST is answered 202 and the answer is an event on the session's stream:
the span ends when that event is written. Real uvicorn on loopback (`transports1.served`).
"""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import httpx
from mcp.server.fastmcp import Context, FastMCP
from opentelemetry.trace import SpanKind, StatusCode
from transports1 import served

from mcpobs import semconv as S

FILLER = 4_000_000
"""Characters of the log message: more than loopback's buffers hold, so the answer's write waits."""
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def export_server() -> FastMCP:
    server = FastMCP("shop")

    @server.tool()
    async def export(ctx: Context) -> str:
        for _ in range(2):  # the second waits to be written: the answer is written after it
            await ctx.info("x" * FILLER)
        return "exported"

    return server


def initialize(version: str) -> dict[str, Any]:
    client = {"name": "raw", "version": "1"}
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": client}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


def read_until_exported(sock: socket.socket) -> None:
    sock.settimeout(10)
    received = b""
    while b'"exported"' not in received[-4096:]:
        chunk = sock.recv(1 << 20)
        assert chunk, "the server closed before answering"
        received += chunk


def call_without_reading(url: str) -> socket.socket:
    """Open a session, POST a tools/call of `export`, read the response's first bytes; the socket stays open."""
    init = initialize("2025-11-25")
    with httpx.Client() as http:
        reply = http.post(url, json=init, headers=HEADERS)
        session = reply.headers["mcp-session-id"]
        headers = {**HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
        http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "export"}}).encode()
    host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
    head = (
        f"POST /mcp HTTP/1.1\r\nhost: {host}:{port}\r\ncontent-type: application/json\r\n"
        f"accept: application/json, text/event-stream\r\nmcp-session-id: {session}\r\n"
        f"mcp-protocol-version: 2025-11-25\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    sock.sendall(head + body)
    first = sock.recv(1024)
    assert first.startswith(b"HTTP/1.1 200"), first[:200]
    return sock


def tools_call_spans(telemetry: Any, wait: float = 10.0) -> list[Any]:
    deadline = time.monotonic() + wait
    while True:
        spans = [
            s
            for s in telemetry.spans()
            if s.kind is SpanKind.SERVER and (s.attributes or {}).get(S.MCP_METHOD_NAME) == "tools/call"
        ]
        if spans or time.monotonic() > deadline:
            return spans
        time.sleep(0.05)


def test_a_1x_reply_its_client_left_before_it_was_written_is_not_ok(telemetry):
    with served(export_server()) as url:
        sock = call_without_reading(url)
        time.sleep(1.0)  # the tool has returned; its answer waits to be written
        assert not tools_call_spans(telemetry, wait=0), "ended before its answer was written"
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        sock.close()  # with unread data: the server sees the connection reset
        spans = tools_call_spans(telemetry)
    assert len(spans) == 1, spans
    attributes = spans[0].attributes or {}
    assert attributes[S.OUTCOME] == S.Outcome.CANCELLED.value, dict(attributes)
    assert attributes[S.ERROR_TYPE] == S.REPLY_UNDELIVERED, dict(attributes)
    assert spans[0].status.status_code is StatusCode.ERROR
    undelivered = {S.MCP_METHOD_NAME: "tools/call", S.ERROR_TYPE: S.REPLY_UNDELIVERED}
    assert telemetry.total(S.SERVER_REQUESTS.name, undelivered) == 1


def test_a_1x_reply_its_client_read_is_ok(telemetry):
    with served(export_server()) as url:
        sock = call_without_reading(url)
        read_until_exported(sock)
        sock.close()
        spans = tools_call_spans(telemetry)
    assert [(s.attributes or {})[S.OUTCOME] for s in spans] == [S.Outcome.OK.value]


def open_sse_stream(url: str) -> tuple[socket.socket, str]:
    """Open an HTTP+SSE session's stream (mcp 1.x `sse_app`) on a raw socket with small buffers,
    initialize over its messages endpoint, and POST a tools/call of `export` (answered 202: the answer
    goes on the stream). The socket, unread past the initialize answer, stays open."""
    host, rest = url.split("//", 1)[1].split("/", 1)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host.split(":")[0], int(host.split(":")[1])))
    sock.sendall(f"GET /{rest} HTTP/1.1\r\nhost: {host}\r\naccept: text/event-stream\r\n\r\n".encode())
    got = b""
    while b"session_id=" not in got or b"\r\n" not in got.split(b"session_id=", 1)[1]:
        got += sock.recv(1024)
    messages = f"http://{host}" + got.split(b"data: ", 1)[1].split(b"\r\n", 1)[0].decode()
    init = initialize("2025-06-18")
    with httpx.Client() as http:
        assert http.post(messages, json=init).status_code == 202
        while b'"id":1,"result"' not in got:
            got += sock.recv(65536)
        http.post(messages, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "export", "arguments": {}}}
        assert http.post(messages, json=call).status_code == 202
    return sock, messages


def test_a_1x_sse_reply_its_client_left_before_it_was_written_is_not_ok(telemetry):
    """HTTP+SSE: the POST is answered 202 and the answer goes on the session's stream; the span used
    to end `ok` as the responder answered, before the answer was written there."""
    with served(export_server(), "sse") as url:
        sock, _ = open_sse_stream(url)
        time.sleep(1.0)  # the tool has returned; its answer waits on the stream behind its log message
        assert not tools_call_spans(telemetry, wait=0), "ended before its answer was written"
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        sock.close()
        spans = tools_call_spans(telemetry)
    assert len(spans) == 1, spans
    attributes = spans[0].attributes or {}
    assert attributes[S.OUTCOME] == S.Outcome.CANCELLED.value, dict(attributes)
    assert attributes[S.ERROR_TYPE] == S.REPLY_UNDELIVERED, dict(attributes)
    undelivered = {S.MCP_METHOD_NAME: "tools/call", S.ERROR_TYPE: S.REPLY_UNDELIVERED}
    assert telemetry.total(S.SERVER_REQUESTS.name, undelivered) == 1


def test_a_1x_sse_reply_its_client_read_is_ok(telemetry):
    with served(export_server(), "sse") as url:
        sock, _ = open_sse_stream(url)
        read_until_exported(sock)
        spans = tools_call_spans(telemetry)
        sock.close()
    assert [(s.attributes or {})[S.OUTCOME] for s in spans] == [S.Outcome.OK.value]
