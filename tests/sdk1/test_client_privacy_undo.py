"""The 1.x client's privacy defaults, `suppress_instrumentation()`, excluded methods, and undo.

Nothing a caller or a tool wrote is recorded by default (arguments, results, a server's error
text); `capture_content=True` records them through `redact`. Inside OpenTelemetry's
`suppress_instrumentation()` nothing is recorded and nothing is added to the wire.
`uninstrument()` unwraps every 1.x seam: no span, no `_meta`, FastMCP 3's own client span back.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
import wrapt
from clients import client_spans, received_meta, session, traceparent_of
from mcp.client.session import ClientSession
from opentelemetry.instrumentation.utils import suppress_instrumentation

import mcpobs
from mcpobs import semconv as S
from mcpobs._core import inventory
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio

SECRET = "O-1873-secret-customer"


async def _calls(client: Any) -> None:
    await client.list_tools()
    await client.call_tool("get_order_status", {"order_id": SECRET})  # a tool error quoting the argument
    await client.call_tool("get_order_status", {"order_id": "O-1873"})


def _everything(telemetry: Any) -> str:
    """Every exported byte of every span: names, attributes, events, status descriptions."""
    return json.dumps(
        [
            (
                s.name,
                dict(s.attributes or {}),
                [(e.name, dict(e.attributes or {})) for e in s.events],
                s.status.description,
            )
            for s in telemetry.spans()
        ],
        default=str,
    )


async def test_nothing_the_caller_or_the_tool_wrote_is_recorded_by_default(mcpobs_telemetry):
    async with session("memory") as client:
        await _calls(client)
    assert SECRET not in _everything(mcpobs_telemetry)
    assert len(client_spans(mcpobs_telemetry, "tools/call get_order_status")) == 2
    for span in client_spans(mcpobs_telemetry):
        assert S.GEN_AI_TOOL_CALL_ARGUMENTS not in span.attributes
        assert S.GEN_AI_TOOL_CALL_RESULT not in span.attributes


async def test_content_is_recorded_when_asked_and_passes_redact():
    captured = capture(capture_content=True, redact=lambda value: json.loads(json.dumps(value).replace(SECRET, "***")))
    try:
        async with session("memory") as client:
            await _calls(client)
    finally:
        mcpobs.uninstrument()
    failed, ok = client_spans(captured, "tools/call get_order_status")
    assert json.loads(failed.attributes[S.GEN_AI_TOOL_CALL_ARGUMENTS]) == {"order_id": "***"}
    assert "***" in failed.attributes[S.GEN_AI_TOOL_CALL_RESULT] and SECRET not in _everything(captured)
    assert json.loads(ok.attributes[S.GEN_AI_TOOL_CALL_RESULT])["structuredContent"]["status"] == "delivered"


async def test_suppressed_calls_record_nothing_and_send_no_trace_context(mcpobs_telemetry):
    with received_meta() as seen, suppress_instrumentation():
        async with session("memory") as client:
            await _calls(client)
    assert client_spans(mcpobs_telemetry) == []
    assert mcpobs_telemetry.total(S.CLIENT_REQUESTS.name) == 0
    assert seen and all("traceparent" not in meta for _, meta in seen)
    with received_meta() as seen:  # the same calls, not suppressed
        async with session("memory") as client:
            await _calls(client)
    assert client_spans(mcpobs_telemetry) and all("traceparent" in meta for _, meta in seen)


async def test_an_excluded_method_has_no_span_and_is_still_counted():
    captured = capture(excluded_methods=["tools/list"])
    try:
        tracer = captured.tracer_provider.get_tracer("host")
        with received_meta() as seen, tracer.start_as_current_span("host") as host:
            async with session("memory") as client:
                await _calls(client)
    finally:
        mcpobs.uninstrument()
    assert not client_spans(captured, "tools/list")
    assert captured.total(S.CLIENT_REQUESTS.name, {S.MCP_METHOD_NAME: "tools/list"}) == 1
    listing = dict(seen)["tools/list"]
    assert listing["traceparent"] == traceparent_of(host)  # no span of its own: the caller's trace goes on


def _wrapped_seams() -> list[str]:
    """Every wrapt wrapper on a 1.x SDK or FastMCP function, by where it sits."""
    found = []
    for name, module in list(sys.modules.items()):
        if not name.startswith(("mcp.", "fastmcp.")):
            continue
        places = [(name, vars(module))]
        places += [(f"{name}.{k}", vars(v)) for k, v in vars(module).items() if isinstance(v, type)]
        for where, namespace in places:
            found += [f"{where}.{a}" for a, v in list(namespace.items()) if isinstance(v, wrapt.FunctionWrapper)]
    return sorted(set(found))


async def test_instrumenting_twice_wraps_each_seam_once(mcpobs_telemetry):
    import fastmcp.client.telemetry
    import fastmcp.client.transports.memory  # noqa: F401  (its rows are wrapped when it is imported)

    mcpobs.instrument()
    mcpobs.MCPInstrumentor().instrument()  # the zero-code path, on top
    rows = [
        s
        for s in inventory.INVENTORY
        if s.kind == "wrap"
        and inventory.applies(s)
        and s.where.startswith(("mcp.client", "mcp.shared", "fastmcp.client"))
    ]
    assert len(rows) >= 15
    for seam in rows:
        owner, attribute = inventory.resolve(seam)  # type: ignore[misc]
        wrapper = vars(owner)[attribute]
        assert isinstance(wrapper, wrapt.FunctionWrapper), seam.where
        assert not isinstance(wrapper.__wrapped__, wrapt.FunctionWrapper), seam.where
    async with session("memory") as client:
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
    assert len(client_spans(mcpobs_telemetry, "tools/call get_order_status")) == 1


async def test_uninstrument_unwraps_every_seam_and_sends_nothing_more(mcpobs_telemetry):
    import fastmcp.client.telemetry

    assert isinstance(vars(ClientSession)["send_request"], wrapt.FunctionWrapper)
    mcpobs.uninstrument()
    assert not [w for w in _wrapped_seams() if w.startswith(("mcp.client", "mcp.shared", "fastmcp.client"))]
    assert "opentelemetry" in type(fastmcp.client.telemetry.get_tracer()).__module__  # FastMCP's own tracer again
    with received_meta() as seen:
        async with session("http") as client:
            await _calls(client)
    assert client_spans(mcpobs_telemetry) == []
    assert all("traceparent" not in meta for _, meta in seen)
