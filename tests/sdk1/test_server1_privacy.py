"""Private by default on mcp 1.x servers: no text a caller, a tool or a peer wrote reaches telemetry unless opted in.

Every host, in memory: a tool's arguments and result, an exception's message (a crash's, a
prompt's), a resource URI's query values, a cancel's reason stay out by default; with
`capture_content`, `record_error_messages` or `raw_resource_uris` they go in, through `redact`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from mcp.shared.exceptions import McpError
from servers1 import HOSTS, create
from transports1 import server_spans, session_over

import mcpobs
from mcpobs import semconv as S
from mcpobs.testing import CapturedTelemetry, capture

pytestmark = pytest.mark.anyio

SECRET = "4111-1111-1111-1111"
SECRET_URI = f"shop://orders?card={SECRET}"


@contextmanager
def instrumented(**options: Any) -> Iterator[CapturedTelemetry]:
    telemetry = capture(clients=False, **options)
    try:
        yield telemetry
    finally:
        mcpobs.uninstrument()


def strings(telemetry: CapturedTelemetry) -> list[str]:
    """Every string the spans carry: names, descriptions, attributes, events."""
    found: list[str] = []
    for span in telemetry.spans():
        found.append(span.name)
        if span.status.description:
            found.append(span.status.description)
        for value in (span.attributes or {}).values():
            found.extend(v for v in (value if isinstance(value, tuple) else (value,)) if isinstance(v, str))
        for event in span.events:
            found.extend(v for v in (event.attributes or {}).values() if isinstance(v, str))
    return found


def leaking(host: str) -> Any:
    """The shop with tools that carry the secret every way: arguments, result, exception message, URI."""
    server = create(host)
    if host == "lowlevel":
        return server
    server.tool()(charge)
    server.prompt()(statement)
    return server


def charge(card_number: str) -> str:
    raise RuntimeError(f"card {card_number} declined")


def echo(card_number: str) -> str:
    return f"charged {card_number}"


def statement(card: str) -> str:
    raise ValueError(f"no statement for {card}")


async def _everything(session: Any, host: str) -> None:
    assert (await session.call_tool("get_order_status", {"order_id": SECRET})).isError  # the argument, the error text
    if host != "lowlevel":
        assert (await session.call_tool("charge", {"card_number": SECRET})).isError
        with pytest.raises(McpError):
            await session.get_prompt("statement", {"card": SECRET})
    with pytest.raises(McpError):
        await session.read_resource(SECRET_URI)  # type: ignore[arg-type]


@pytest.mark.parametrize("host", HOSTS)
async def test_nothing_anyone_wrote_is_recorded_by_default(host):
    with instrumented() as telemetry:
        async with session_over("memory", leaking(host)) as session:
            await _everything(session, host)
    assert not [s for s in strings(telemetry) if SECRET in s]
    (read,) = server_spans(telemetry, "resources/read")
    assert read.attributes[S.MCP_RESOURCE_URI] == "shop://orders?card=REDACTED"  # keys kept, values out
    for span in server_spans(telemetry):
        assert S.GEN_AI_TOOL_CALL_ARGUMENTS not in span.attributes and S.GEN_AI_TOOL_CALL_RESULT not in span.attributes
    if host != "lowlevel":
        crash = server_spans(telemetry, "tools/call charge")[0]
        assert crash.status.description == "RuntimeError"


@pytest.mark.parametrize("host", ["fastmcp1", "fastmcp3"])
async def test_content_is_captured_when_opted_in_and_redact_sees_it(host):
    seen: list[Any] = []

    def redact(value: Any) -> Any:
        seen.append(value)
        return "[redacted]" if SECRET in str(value) else value

    server = create(host)
    server.tool()(echo)
    with instrumented(capture_content=True, redact=redact) as telemetry:
        async with session_over("memory", server) as session:
            await session.call_tool("echo", {"card_number": SECRET})
            await session.call_tool("get_order_status", {"order_id": "O-1873"})
    echoed = server_spans(telemetry, "tools/call echo")[0]
    assert echoed.attributes[S.GEN_AI_TOOL_CALL_ARGUMENTS] == '"[redacted]"'
    assert echoed.attributes[S.GEN_AI_TOOL_CALL_RESULT] == '"[redacted]"'
    status = server_spans(telemetry, "tools/call get_order_status")[0]
    assert "O-1873" in status.attributes[S.GEN_AI_TOOL_CALL_ARGUMENTS]
    assert "delivered" in status.attributes[S.GEN_AI_TOOL_CALL_RESULT]  # the 1.x result, in its wire shape
    assert seen and not [s for s in strings(telemetry) if SECRET in s]


async def test_error_messages_and_raw_uris_are_recorded_only_when_opted_in():
    with instrumented(record_error_messages=True, raw_resource_uris=True) as telemetry:
        async with session_over("memory", leaking("fastmcp1")) as session:
            await _everything(session, "fastmcp1")
    crash = server_spans(telemetry, "tools/call charge")[0]
    assert SECRET in (crash.status.description or "")
    assert server_spans(telemetry, "resources/read")[0].attributes[S.MCP_RESOURCE_URI] == SECRET_URI
