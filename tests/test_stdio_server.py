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
