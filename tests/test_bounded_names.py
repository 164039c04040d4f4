"""Every span name and metric label is bounded, the server's own names included, and a forwarded
address is one valid address or nothing.

A catalog generated from an OpenAPI spec can register a 20,000-character tool name; a proxy (or
a caller through one) can write a 4,096-character `X-Forwarded-For`, which uvicorn's proxy
headers put in the ASGI scope as the client's address.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from opentelemetry.trace import SpanKind
from test_http_boundary import CALL_HEADERS, call, settle
from transports import serve_http

from mcpobs import semconv as S
from mcpobs.testing import CapturedTelemetry

pytestmark = pytest.mark.anyio

LONG = "op_" + "x" * 19_997  # 20,000 characters: the server's own, registered name


def labels(telemetry: CapturedTelemetry) -> list[str]:
    data = telemetry.reader.get_metrics_data()
    found: list[str] = []
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    found.extend(str(v) for v in (point.attributes or {}).values())
    return found


def assert_bounded(telemetry: CapturedTelemetry) -> None:
    spans = telemetry.spans()
    assert spans
    for span in spans:
        assert len(span.name) <= 64 + S.MAX_TARGET_LENGTH, span.name[:80]
        # The server's span starts with its labels; a client's span keeps the name as sent (the
        # label had to bound it: `_OTHER`), cut to the attribute limit like any text.
        limit = S.MAX_TARGET_LENGTH if span.kind is SpanKind.SERVER else S.DEFAULT_MAX_ATTRIBUTE_LENGTH
        for key in (S.GEN_AI_TOOL_NAME, S.CLIENT_ADDRESS):
            value = (span.attributes or {}).get(key)
            assert value is None or len(str(value)) <= limit, (key, str(value)[:80])
    found = labels(telemetry)
    assert found and all(len(v) <= S.MAX_TARGET_LENGTH for v in found), max(found, key=len)[:80]


def long_server() -> MCPServer:
    mcp = MCPServer("catalog")

    @mcp.tool(name=LONG)
    def generated(order_id: str) -> str:
        """A tool a generator named."""
        return order_id

    @mcp.tool(name=LONG[:-1] + "y")  # the same first 19,999 characters: still two series
    def generated_twin(order_id: str) -> str:
        """Its twin."""
        return order_id

    return mcp


async def test_a_servers_own_20000_character_tool_name_is_bounded_on_every_span_name_and_label(mcpobs_telemetry):
    async with Client(long_server()) as client:
        await client.call_tool(LONG, {"order_id": "O-1"})
        await client.call_tool(LONG[:-1] + "y", {"order_id": "O-1"})
    assert_bounded(mcpobs_telemetry)
    names = sorted({s.name for s in mcpobs_telemetry.spans() if s.name.startswith("tools/call op_")})
    assert len(names) == 2 and all("\u2026" in n for n in names)  # the cut shows, and the twins stay apart
    assert names[0].startswith("tools/call " + LONG[:100])


def post(base: str, forwarded: str) -> None:
    headers = {**CALL_HEADERS, "x-forwarded-for": forwarded}
    with httpx2.Client(timeout=10) as http:
        assert http.post(base + "/mcp", headers=headers, content=json.dumps(call()).encode()).status_code == 200


@pytest.mark.parametrize(
    "forwarded",
    ["1" * 4096, "203.0.113.7" + ", 198.51.100.1" * 300, "evil\x1b[2J.example", "2001:db8::1" + "0" * 4000],
    ids=["4096 digits", "a 4,000-character list", "a name", "a long IPv6"],
)
def test_a_hostile_x_forwarded_for_is_dropped_and_bounds_every_name_and_label(mcpobs_telemetry, forwarded):
    from shop import create_server

    with serve_http(create_server().streamable_http_app()) as base:
        post(base, forwarded)
        (span,) = settle(mcpobs_telemetry, 1)
    assert_bounded(mcpobs_telemetry)
    recorded: Any = (span.attributes or {}).get(S.CLIENT_ADDRESS)
    assert recorded is None or recorded == "198.51.100.1"  # uvicorn keeps the last entry of a list: one address


@pytest.mark.parametrize(("forwarded", "address"), [("203.0.113.7", "203.0.113.7"), ("2001:DB8::1", "2001:db8::1")])
def test_a_valid_forwarded_address_is_recorded_in_its_canonical_form(mcpobs_telemetry, forwarded, address):
    from shop import create_server

    with serve_http(create_server().streamable_http_app()) as base:
        post(base, forwarded)
        (span,) = settle(mcpobs_telemetry, 1)
    assert span.attributes[S.CLIENT_ADDRESS] == address
