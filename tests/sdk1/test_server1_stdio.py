"""mcp 1.x over stdio: a server in a subprocess, its spans labelled `pipe`, its trace from `_meta`, its stdout the wire."""

from __future__ import annotations

import json

import pytest
from mcp.client.stdio import stdio_client
from mcp.shared.message import SessionMessage
from servers1 import HOSTS
from transports1 import eventually, read_spans, session_on_stdio, stdio_params

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("host", HOSTS)
async def test_a_stdio_server_records_each_outcome_on_the_pipe(tmp_path, host):
    spans_file = tmp_path / "spans.jsonl"
    metrics_file = tmp_path / "metrics.json"
    garbage: list[object] = []

    async def on_message(message: object) -> None:
        if isinstance(message, Exception):  # a line on stdout that is not JSON-RPC
            garbage.append(message)

    meta = {"traceparent": f"00-{0x5EED:032x}-{0xCAFE:016x}-01"}
    params = stdio_params(host, spans_file, MCPOBS_TEST_METRICS=str(metrics_file))
    async with stdio_client(params) as (read, write):
        from mcp import ClientSession

        async with ClientSession(read, write, message_handler=on_message) as session:
            await session.initialize()
            await session.list_tools()
            await session.call_tool("get_order_status", {"order_id": "O-1873"}, meta=meta)
            await session.call_tool("get_order_status", {"order_id": "O-9999"})
            await session.call_tool("quote_refund", {"order_id": "O-1873", "amount_cents": -1})

            def calls():
                return [s for s in read_spans(spans_file) if s["name"].startswith("tools/call")]

            found = await eventually(lambda: len(calls()) >= 3 and calls(), 15)
    assert not garbage
    ok, tool_error, crash = found
    assert [ok["attributes"][S.OUTCOME], tool_error["attributes"][S.OUTCOME], crash["attributes"][S.OUTCOME]] == [
        "ok",
        "tool_error",
        "server_error",
    ]
    assert all(s["attributes"][S.NETWORK_TRANSPORT] == "pipe" for s in found)
    assert ok["trace_id"] == f"{0x5EED:032x}" and ok["parent_id"] == f"{0xCAFE:016x}"
    assert S.MCP_SESSION_ID not in ok["attributes"]  # stdio has none
    # The session's duration, recorded as the process ends (its stdin closed).
    points = await eventually(lambda: metrics_file.exists() and json.loads(metrics_file.read_text() or "{}"), 10)
    (session_point,) = points[S.SERVER_SESSION_DURATION.name]
    assert session_point["attributes"] == {S.MCP_PROTOCOL_VERSION: "2025-11-25", S.NETWORK_TRANSPORT: "pipe"}


async def test_a_request_the_session_cannot_parse_is_recorded_on_the_pipe(tmp_path):
    """No HTTP boundary sees it, and no handler: the session's parse is where it is refused."""
    from mcp.types import JSONRPCMessage, JSONRPCRequest

    spans_file = tmp_path / "spans.jsonl"
    async with session_on_stdio("lowlevel", spans_file) as session:
        # what a 2.x client sends first, and what a typed 1.x client never would
        for i, method in enumerate(["server/discover", "bogus/method-4711"]):
            raw = JSONRPCRequest(jsonrpc="2.0", id=100 + i, method=method, params={})
            await session._write_stream.send(SessionMessage(JSONRPCMessage(raw)))

        def refused():
            return [s for s in read_spans(spans_file) if s["attributes"].get(S.RPC_RESPONSE_STATUS_CODE) == "-32602"]

        found = await eventually(lambda: len(refused()) >= 2 and refused(), 15)
    assert found, [(s["name"], s["attributes"]) for s in read_spans(spans_file)]
    discover, bogus = sorted(found, key=lambda s: s["name"] != "server/discover")
    assert discover["name"] == "server/discover" and bogus["name"] == S.OTHER
    for span in (discover, bogus):
        assert span["attributes"][S.OUTCOME] == "client_error"
        assert span["attributes"][S.FAILURE_BOUNDARY] == "capability"
        assert span["attributes"][S.NETWORK_TRANSPORT] == "pipe"
