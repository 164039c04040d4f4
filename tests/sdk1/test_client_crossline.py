"""One trace across the two SDK lines: an instrumented mcp 1.x client calling an instrumented mcp 2.3 server.

The 2.3 server (`tests/shop.py`) runs in a subprocess of the main venv (`.venv`), over Streamable
HTTP on loopback and over stdio, and writes its spans to a file; this test runs in the 1.x venv.
Each call is one trace: the server's span is the child of the client's CLIENT span (propagated in
`_meta`), and both sides record the same outcome for ok, a `ToolError`, a crash, an unknown tool
and bad arguments (the server's verdict rides back in the result's `_meta`).
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from clients import CALLS, EXPECTED, client_spans, outcome_of, server23_http, server23_stdio, server_spans
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio


async def _calls(transport: str, spans_file: Path) -> list[bool]:
    async with AsyncExitStack() as stack:
        if transport == "http":
            base = stack.enter_context(server23_http(spans_file))
            read, write, _ = await stack.enter_async_context(streamable_http_client(base + "/mcp"))
        else:
            read, write = await stack.enter_async_context(stdio_client(server23_stdio(spans_file)))
        client = await stack.enter_async_context(ClientSession(read, write))
        await client.initialize()
        await client.list_tools()
        errors = [(await client.call_tool(name, arguments)).isError for _, name, arguments in CALLS]
        await client.send_ping()
        return errors


def _pairs(telemetry: Any, spans_file: Path, prefix: str, count: int) -> list[tuple[Any, dict[str, Any]]]:
    calls = [s for s in client_spans(telemetry) if s.name.startswith(prefix)]
    assert len(calls) == count
    served = {s["parent_id"]: s for s in server_spans(spans_file, prefix, count)}
    pairs = [(c, served.get(f"{c.context.span_id:016x}")) for c in calls]
    assert all(s is not None for _, s in pairs), "each server span is its client span's child"
    return pairs  # type: ignore[return-value]


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_a_1x_client_and_a_23_server_make_one_trace_per_call_with_one_outcome(
    mcpobs_telemetry, transport, tmp_path
):
    spans_file = tmp_path / "server-spans.jsonl"
    errors = await _calls(transport, spans_file)
    assert errors == [False, True, True, True, True]
    pairs = _pairs(mcpobs_telemetry, spans_file, "tools/call", len(CALLS))
    for client, server in pairs:
        assert server["trace_id"] == f"{client.context.trace_id:032x}"  # one trace per call
        assert server["name"] == client.name
    client_table = [outcome_of(c.attributes) for c, _ in pairs]
    server_table = [outcome_of(s["attributes"]) for _, s in pairs]
    assert server_table == EXPECTED
    assert client_table == server_table
    # the 1.x client's fingerprints of what it listed are the server's own: the listing is current
    ok_client, ok_server = pairs[0]
    for name in (S.TOOL_SCHEMA_FINGERPRINT, S.TOOL_CONTRACT_FINGERPRINT):
        assert ok_client.attributes[name] == ok_server["attributes"][name]
    assert S.TOOL_SCHEMA_STALE not in ok_server["attributes"]  # written only when true
    # the failures are the server's verdict, not the wire's `isError`
    assert [c.attributes.get(S.OUTCOME_SOURCE) for c, _ in pairs][1:] == ["server"] * 4
    for method in ("initialize", "tools/list", "ping"):
        ((client, server),) = _pairs(mcpobs_telemetry, spans_file, method, 1)
        assert outcome_of(client.attributes) == outcome_of(server["attributes"]) == ("ok", None)
    handshake = client_spans(mcpobs_telemetry, "initialize")[0]
    assert handshake.attributes[S.SESSION_NEGOTIATED_VERSION] == "2025-11-25"  # a 1.x client's revision
    assert handshake.attributes[S.SERVER_VERSION] == "1.0.0"  # the shop's release, from its handshake


async def _results(base: str) -> list[Any]:
    async with streamable_http_client(base + "/mcp") as (read, write, _), ClientSession(read, write) as client:
        await client.initialize()
        await client.list_tools()
        return [
            (await client.call_tool(name, arguments)).model_dump(by_alias=True, mode="json")
            for _, name, arguments in CALLS
        ]


async def test_the_host_sees_the_same_results_with_and_without_mcpobs_on_the_client(tmp_path):
    """What the instrumented 1.x client adds (trace context, the fingerprint, whatever the verdict
    protocol asks) and reads stays out of what its host gets back."""
    import mcpobs
    from mcpobs.testing import capture

    with server23_http(tmp_path / "server-spans.jsonl") as base:
        plain = await _results(base)
        captured = capture()
        try:
            instrumented = await _results(base)
        finally:
            mcpobs.uninstrument()
    assert len(client_spans(captured, "tools/call get_order_status")) == 2  # the client was instrumented
    assert instrumented == plain
