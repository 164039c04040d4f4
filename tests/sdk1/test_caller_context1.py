"""mcp 1.x: a caller's trace context is data at the server's boundary, as on 2.x
(`tests/test_caller_context.py`): over loopback HTTP, in the `traceparent` header and in `_meta`,
a caller's `-00` does not hide the server's span by default, `caller_context="trust"` honours
it, and a `tracestate` holding a card number reaches no exported span."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from servers1 import HOSTS, create
from transports1 import server_spans, session_over

import mcpobs
from mcpobs.testing import CapturedTelemetry, capture

pytestmark = pytest.mark.anyio

TRACE_ID = 0x4BF92F3577B34DA6A3CE929D0E0E4736
UNSAMPLED = f"00-{TRACE_ID:032x}-00f067aa0ba902b7-00"
CARD = "4111111111111111"


@contextmanager
def instrumented(**options: Any) -> Iterator[CapturedTelemetry]:
    telemetry = capture(clients=False, **options)
    try:
        yield telemetry
    finally:
        mcpobs.uninstrument()


async def call(host: str, carrier: str) -> None:
    context = {"traceparent": UNSAMPLED, "tracestate": f"vendor=card-{CARD}"}
    headers = context if carrier == "header" else None
    async with session_over("http", create(host), headers=headers) as session:
        await session.call_tool("get_order_status", {"order_id": "O-1873"}, meta=context if carrier == "meta" else None)


@pytest.mark.parametrize("carrier", ["header", "meta"])
@pytest.mark.parametrize("host", HOSTS)
async def test_a_callers_unsampled_traceparent_still_gives_the_server_its_span(host, carrier):
    with instrumented() as telemetry:
        await call(host, carrier)
    (span,) = server_spans(telemetry, "tools/call get_order_status")
    assert span.context.trace_id == TRACE_ID and span.context.trace_flags.sampled
    assert not span.context.trace_state
    assert CARD.encode() not in encode_spans(telemetry.spans()).SerializeToString()


@pytest.mark.parametrize("carrier", ["header", "meta"])
async def test_a_trusted_mesh_has_the_callers_decision_honoured(carrier):
    with instrumented(caller_context="trust") as telemetry:
        await call("fastmcp1", carrier)
    assert server_spans(telemetry, "tools/call get_order_status") == []
