"""A reply that could not be written is never `ok` (issue 50).

A tool can finish and its answer still never reach its client: the client left (or its proxy cut
the connection) while the answer waited to be written, or the server stopped first. The SERVER
span used to end when the handler returned, `ok`, before the SDK wrote anything. Now it ends when
the answer is written or is not: `cancelled` (the caller went away) or `stopped` (the server's stop
kept it back), each `error.type=reply_undelivered`.

The clients here speak raw HTTP, to stop reading at a known point: the tool reports progress twice
with a large message, which commits the response to an event stream and fills the connection's
buffers; the second waits to be written, and the answer after it, for a reader that never reads. Real uvicorn on loopback.
"""

from __future__ import annotations

import json
import signal
import socket
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.server.mcpserver import Context, MCPServer
from opentelemetry.trace import SpanKind, StatusCode
from otlp_receiver import OtlpReceiver
from shapes import APP, serve
from transports import raw_session, serve_http

from mcpobs import semconv as S

V = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": V,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    "progressToken": 1,
}
FILLER = 4_000_000
"""Characters of the progress message: more than loopback's buffers hold, so the answer's write waits."""

EXPORT_APP = APP.replace(
    "app = server.streamable_http_app()",
    f'''
from mcp.server.mcpserver import Context


@server.tool()
async def export(ctx: Context) -> str:
    """Finishes at once, after telling its client much about it."""
    for step in (1, 2):  # the second waits to be written: the answer is written after it
        await ctx.report_progress(step, 2, "x" * {FILLER})
    return "exported"


app = server.streamable_http_app()
''',
)


def export_server() -> MCPServer:
    server = MCPServer("shop")

    @server.tool()
    async def export(ctx: Context) -> str:
        for step in (1, 2):  # the second waits to be written: the answer is written after it
            await ctx.report_progress(step, 2, "x" * FILLER)
        return "exported"

    return server


def call_without_reading(port: int, legacy: bool = False) -> socket.socket:
    """POST a tools/call of `export` and read only the response's first bytes; the socket stays open.

    `legacy`: in a 2025-11-25 session (the answer goes through the session's dispatcher and its
    transport's stream), else a 2026-07-28 request (the answer written after `serve_one`)."""
    if legacy:
        with httpx2.Client() as http:
            headers = raw_session(http, f"http://127.0.0.1:{port}/mcp")
        meta: dict[str, Any] = {"progressToken": 1}
        session = f"mcp-session-id: {headers['mcp-session-id']}\r\nmcp-protocol-version: 2025-11-25\r\n"
    else:
        meta, session = ENVELOPE, f"mcp-protocol-version: {V}\r\nmcp-method: tools/call\r\nmcp-name: export\r\n"
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "export", "arguments": {}, "_meta": meta},
        }
    ).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
        f"accept: application/json, text/event-stream\r\n{session}content-length: {len(body)}\r\n\r\n"
    ).encode()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.sendall(head + body)
    first = sock.recv(1024)
    assert first.startswith(b"HTTP/1.1 200"), first[:200]
    return sock


def leave(sock: socket.socket) -> None:
    """Close with unread data: the peer sees the connection reset, as when a client process dies."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    sock.close()


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


@pytest.mark.parametrize("legacy", [False, True], ids=["2026-07-28", "2025-11-25 session"])
def test_a_reply_its_client_left_before_it_was_written_is_not_ok(mcpobs_telemetry, legacy):
    """The tool finished; its client left while the answer waited to be written: `cancelled`,
    `reply_undelivered` (before: `ok`, the span ended when the handler returned)."""
    with serve_http(export_server().streamable_http_app()) as base:
        sock = call_without_reading(int(base.rsplit(":", 1)[1]), legacy)
        time.sleep(1.0)  # the handler has returned; its answer waits behind the progress message
        assert not tools_call_spans(mcpobs_telemetry, wait=0), "ended before its answer was written"
        leave(sock)
        spans = tools_call_spans(mcpobs_telemetry)
    assert len(spans) == 1, spans
    attributes = spans[0].attributes or {}
    assert attributes[S.OUTCOME] == S.Outcome.CANCELLED.value, dict(attributes)
    assert attributes[S.ERROR_TYPE] == S.REPLY_UNDELIVERED, dict(attributes)
    assert attributes[S.FAILURE_BOUNDARY] == S.Boundary.TRANSPORT.value
    assert spans[0].status.status_code is StatusCode.ERROR
    undelivered = {S.MCP_METHOD_NAME: "tools/call", S.ERROR_TYPE: S.REPLY_UNDELIVERED}
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, undelivered) == 1
    assert (
        mcpobs_telemetry.total(S.SERVER_REQUESTS.name, {S.OUTCOME: S.Outcome.OK.value, S.MCP_METHOD_NAME: "tools/call"})
        == 0
    )


def test_a_reply_its_client_read_is_ok(mcpobs_telemetry):
    """The same call, its answer read to the end: `ok`, as before (the span ends once it is written)."""
    with serve_http(export_server().streamable_http_app()) as base:
        sock = call_without_reading(int(base.rsplit(":", 1)[1]))
        sock.settimeout(10)
        received = b""
        while b'"exported"' not in received[-4096:]:
            chunk = sock.recv(1 << 20)
            assert chunk, "the server closed before answering"
            received += chunk
        sock.close()
        spans = tools_call_spans(mcpobs_telemetry)
    assert [(s.attributes or {})[S.OUTCOME] for s in spans] == [S.Outcome.OK.value]
    assert S.ERROR_TYPE not in (spans[0].attributes or {})


@pytest.mark.slow
def test_a_reply_the_servers_stop_kept_back_is_stopped(tmp_path: Path):
    """uvicorn's grace ends while the finished call's answer waits to be written: `stopped`,
    `reply_undelivered`, exported and counted (before: `ok`)."""
    receiver = OtlpReceiver()
    with (
        receiver.running(),
        serve("uvicorn", receiver, tmp_path, EXPORT_APP, ("--timeout-graceful-shutdown", "1")) as served,
    ):
        port = int(served.url.rsplit(":", 1)[1].split("/")[0])
        sock = call_without_reading(port)
        time.sleep(1.0)
        served.stop(signal.SIGTERM, wait=30)
        sock.close()
    time.sleep(0.3)
    with receiver.lock:
        spans = [s for s in receiver.received_spans if s.attributes.get(S.MCP_METHOD_NAME) == "tools/call"]
    assert [(s.attributes[S.OUTCOME], s.attributes.get(S.ERROR_TYPE)) for s in spans] == [
        (S.Outcome.STOPPED.value, S.REPLY_UNDELIVERED)
    ], served.stderr.read_text()[-3000:]
    totals = receiver.final_totals(
        S.SERVER_REQUESTS.name, **{S.MCP_METHOD_NAME: "tools/call", S.ERROR_TYPE: S.REPLY_UNDELIVERED}
    )
    assert sum(totals.values()) == 1, totals
