"""Hostile or broken input on the wire is recorded, never a crash, and never unbounded."""

from __future__ import annotations

import pytest
from mcp import Client
from opentelemetry.trace import SpanKind
from shop import create_server

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

BROKEN_CARRIERS = [
    {"traceparent": "00-zzzz-not-hex-01"},
    {"traceparent": "00-" + "0" * 32 + "-" + "0" * 16 + "-01"},  # all-zero ids are invalid
    {"traceparent": 12345},
    {"traceparent": ["00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"]},
    {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "=" * 10_000},
    {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "baggage": "k=" + "v" * 100_000},
    {"baggage": {"not": "a string"}, "tracestate": None},
    {"unicode-ключ": "значение 🚀", "traceparent": "ff-ünïcödé"},
]


@pytest.mark.parametrize("carrier", BROKEN_CARRIERS)
async def test_malformed_trace_context_is_ignored_not_fatal(mcpobs_telemetry, carrier):
    async with Client(create_server()) as client:
        result = await client.call_tool("get_order_status", {"order_id": "O-1873"}, meta=carrier)
    assert not result.is_error
    span = mcpobs_telemetry.span("tools/call get_order_status", SpanKind.SERVER)
    assert span.attributes[S.OUTCOME] == "ok"


async def test_a_megabyte_of_meta_changes_nothing(mcpobs_telemetry):
    meta = {f"k{i}": "x" * 1000 for i in range(1000)}
    async with Client(create_server()) as client:
        result = await client.call_tool("get_order_status", {"order_id": "O-1873"}, meta=meta)
    assert result.structured_content == {"order_id": "O-1873", "status": "delivered"}
    span = mcpobs_telemetry.span("tools/call get_order_status", SpanKind.SERVER)
    for value in span.attributes.values():
        assert not isinstance(value, str) or len(value) <= S.DEFAULT_MAX_ATTRIBUTE_LENGTH


async def test_unicode_tool_names_are_bounded_like_any_other(mcpobs_telemetry):
    async with Client(create_server()) as client:
        for name in ("запрос", "🚀" * 5000, "a\x00b", "tools/call get_order_status"):
            assert (await client.call_tool(name, {})).is_error
    names = {s.name for s in mcpobs_telemetry.spans() if s.kind is SpanKind.SERVER}
    assert names <= {"server/discover", "tools/call", "tools/list"}
