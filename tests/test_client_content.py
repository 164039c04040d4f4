"""Opt-in content capture on the client side: the same switch, redaction and limit as the server's."""

from __future__ import annotations

import json

import pytest
from shop import create_server
from transports import connected

import mcpobs
from mcpobs import semconv as S
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio


def redact(value):
    if isinstance(value, dict):
        return {k: "***" if k == "order_id" else redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


async def _call(transport, **options):
    telemetry = capture(**options)
    try:
        async with connected(transport, create_server()) as client:
            await client.call_tool("get_order_status", {"order_id": "O-1873"})
        return telemetry.client_span("tools/call get_order_status")
    finally:
        mcpobs.uninstrument()


@pytest.mark.parametrize("transport", ["auto", "legacy", "http"])
async def test_the_client_records_arguments_and_result_when_opted_in(transport):
    span = await _call(transport, capture_content=True, redact=redact, max_content_length=200)
    assert json.loads(span.attributes[S.GEN_AI_TOOL_CALL_ARGUMENTS]) == {"order_id": "***"}
    result = json.loads(span.attributes[S.GEN_AI_TOOL_CALL_RESULT])
    assert result["structuredContent"] == {"order_id": "***", "status": "delivered"}
    assert result["isError"] is False


async def test_the_client_records_no_content_by_default():
    span = await _call("auto")
    assert S.GEN_AI_TOOL_CALL_ARGUMENTS not in span.attributes
    assert S.GEN_AI_TOOL_CALL_RESULT not in span.attributes
    assert "O-1873" not in json.dumps(dict(span.attributes))


async def test_captured_client_content_is_cut_to_the_limit():
    span = await _call("auto", capture_content=True, max_content_length=20)
    assert len(span.attributes[S.GEN_AI_TOOL_CALL_RESULT]) == 20
