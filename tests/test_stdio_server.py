"""A server instrumented in a stdio subprocess: every outcome, and nothing but JSON-RPC on stdout."""

from __future__ import annotations

import pytest
from mcp import Client
from transports import read_spans, stdio_params

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio


async def test_outcomes_over_stdio(tmp_path):
    spans_file = tmp_path / "spans.jsonl"
    async with Client(stdio_params(spans_file)) as client:
        assert not (await client.call_tool("get_order_status", {"order_id": "O-1873"})).is_error
        assert (await client.call_tool("get_order_status", {"order_id": "O-404"})).is_error
        assert (await client.call_tool("quote_refund", {"order_id": "O-1", "amount_cents": -5})).is_error
        assert (await client.call_tool("invented_tool", {})).is_error
        assert (await client.call_tool("quote_refund", {"order_id": "O-1", "amount_cents": "x"})).is_error
    spans = [s for s in read_spans(spans_file) if s["kind"] == "SERVER"]
    calls = [(s["name"], s["attributes"][S.OUTCOME], s["attributes"].get(S.FAILURE_BOUNDARY)) for s in spans]
    assert [c for c in calls if c[0].startswith("tools/call")] == [
        ("tools/call get_order_status", "ok", None),
        ("tools/call get_order_status", "tool_error", "handler"),
        ("tools/call quote_refund", "server_error", "handler"),
        ("tools/call", "client_error", "discovery"),
        ("tools/call quote_refund", "client_error", "arguments"),
    ]
    assert all(s["attributes"][S.NETWORK_TRANSPORT] == "pipe" for s in spans)


def test_a_request_before_the_handshake_fails_at_the_handshake_boundary(tmp_path):
    """Raw JSON-RPC on stdin: tools/list before initialize, as a client that skipped it would."""
    import json
    import subprocess
    import sys

    from transports import HERE

    spans_file = tmp_path / "spans.jsonl"
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    done = subprocess.run(
        [sys.executable, str(HERE / "stdio_server.py"), str(spans_file)],
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    (reply,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert reply["id"] == 1 and reply["error"]["code"] == -32602
    (span,) = [s for s in read_spans(spans_file) if s["name"] == "tools/list"]
    assert span["attributes"][S.OUTCOME] == "client_error"
    assert span["attributes"][S.FAILURE_BOUNDARY] == "handshake"
    assert span["attributes"][S.RPC_RESPONSE_STATUS_CODE] == "-32602"
