"""Whose mistake a failed call was, on the client: the server's verdict, else the client's own listing.

At 2026-07-28 the SDK answers an unknown tool, bad arguments, a deliberate `ToolError` and a
crash alike with an `isError` result. A server running mcpobs says which in the result's
`_meta` (`semconv.META_VERDICT`) to an instrumented client that asks, which takes it out before
its host sees the result; with `send_verdict=False` it says nothing (as a server without
mcpobs), and the client falls back to what it listed: a name the listing does not
hold is `discovery`, arguments the listed schema refuses are `arguments`, a crash stays
`handler`. The listing is kept per server: a later session's calls use what an earlier one listed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from opentelemetry.trace import SpanKind
from shop import create_server
from transports import connected, serve_http

import mcpobs
from mcpobs import semconv as S
from mcpobs._client import catalog
from mcpobs.testing import CapturedTelemetry, capture

pytestmark = pytest.mark.anyio

CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("ok", "get_order_status", {"order_id": "O-1873"}),
    ("tool error", "get_order_status", {"order_id": "O-7144"}),
    ("crash", "quote_refund", {"order_id": "O-1873", "amount_cents": -5}),
    ("unknown tool", "shop__get_order_status", {"order_id": "O-1873"}),
    ("bad arguments", "quote_refund", {"order_id": "O-1873", "amount_cents": "many"}),
]
SERVER_SAYS = {
    "ok": ("ok", None),
    "tool error": ("tool_error", "handler"),
    "crash": ("server_error", "handler"),
    "unknown tool": ("client_error", "discovery"),
    "bad arguments": ("client_error", "arguments"),
}


@pytest.fixture
def silent() -> Iterator[CapturedTelemetry]:
    """mcpobs on both sides, but the server sends no verdict: the client is on its own."""
    captured = capture(send_verdict=False)
    try:
        yield captured
    finally:
        mcpobs.uninstrument()
        captured.tracer_provider.shutdown()
        captured.meter_provider.shutdown()


def _verdicts(telemetry: CapturedTelemetry, kind: SpanKind) -> list[tuple[Any, ...]]:
    spans = sorted(
        (s for s in telemetry.spans() if s.kind is kind and s.attributes.get(S.MCP_METHOD_NAME) == "tools/call"),
        key=lambda s: s.start_time,
    )
    return [
        (s.attributes[S.OUTCOME], s.attributes.get(S.FAILURE_BOUNDARY), s.attributes.get(S.OUTCOME_SOURCE))
        for s in spans
    ]


async def _call_all(client: Any) -> list[Any]:
    return [await client.call_tool(name, arguments) for _, name, arguments in CALLS]


@pytest.mark.parametrize("transport", ["auto", "legacy", "http"])
async def test_the_client_says_what_the_server_decided(mcpobs_telemetry, transport):
    async with connected(transport, create_server()) as client:
        results = await _call_all(client)  # never listed: only the server can tell them apart
    for (label, _, _), result in zip(CALLS, results, strict=True):
        assert S.META_VERDICT not in (result.meta or {}), label  # the client took it out: the host never sees it
    server = [v[:2] for v in _verdicts(mcpobs_telemetry, SpanKind.SERVER)]
    client = _verdicts(mcpobs_telemetry, SpanKind.CLIENT)
    assert server == [SERVER_SAYS[label] for label, _, _ in CALLS]
    assert [v[:2] for v in client] == server  # the two columns agree
    assert [v[2] for v in client] == [None, "server", "server", "server", "server"]
    for span in mcpobs_telemetry.spans():
        if span.kind is SpanKind.CLIENT and span.attributes[S.OUTCOME] != "ok":
            assert span.attributes[S.ERROR_TYPE] == S.TOOL_ERROR  # what the wire said: an isError result
    # the client's metrics take the verdict too
    counted = {S.MCP_METHOD_NAME: "tools/call", S.OUTCOME: "client_error"}
    assert mcpobs_telemetry.total(S.CLIENT_REQUESTS.name, {**counted, S.FAILURE_BOUNDARY: "discovery"}) == 1
    assert mcpobs_telemetry.total(S.CLIENT_REQUESTS.name, {**counted, S.FAILURE_BOUNDARY: "arguments"}) == 1
    crashed = {S.MCP_METHOD_NAME: "tools/call", S.OUTCOME: "server_error", S.FAILURE_BOUNDARY: "handler"}
    assert mcpobs_telemetry.total(S.CLIENT_REQUESTS.name, crashed) == 1


async def test_a_server_told_not_to_sends_no_verdict_and_an_unlisting_client_says_what_the_wire_said(silent):
    async with Client(create_server()) as client:
        # failures first: the SDK lists the tools itself to validate a successful call's result
        results = [await client.call_tool(name, arguments) for _, name, arguments in CALLS[1:]]
    assert all(S.META_VERDICT not in (r.meta or {}) for r in results)
    client = _verdicts(silent, SpanKind.CLIENT)
    assert client == [("tool_error", "handler", None)] * 4  # nothing listed: no guess


@pytest.mark.parametrize("transport", ["auto", "http"])
async def test_without_a_verdict_the_client_judges_from_its_listing(silent, transport):
    async with connected(transport, create_server()) as client:
        await client.list_tools()
        await _call_all(client)
    client = _verdicts(silent, SpanKind.CLIENT)
    assert client == [
        ("ok", None, None),
        ("tool_error", "handler", None),
        ("tool_error", "handler", None),  # a crash the server hides: the listing cannot tell it from a ToolError
        ("client_error", "discovery", "listing"),
        ("client_error", "arguments", "listing"),
    ]


async def test_a_prompt_never_listed_or_missing_a_required_argument_is_the_callers(silent):
    async with Client(create_server()) as client:
        await client.list_prompts()
        for name, arguments in (("no_such_prompt", None), ("refund_reply", {})):
            with pytest.raises(MCPError):
                await client.get_prompt(name, arguments)
        await client.get_prompt("refund_reply", {"customer": "Ada"})
    spans = sorted(silent.spans_named("prompts/get", SpanKind.CLIENT), key=lambda s: s.start_time)
    spans += sorted(silent.spans_named("prompts/get refund_reply", SpanKind.CLIENT), key=lambda s: s.start_time)
    said = sorted(
        (s.attributes[S.OUTCOME], s.attributes.get(S.FAILURE_BOUNDARY), s.attributes.get(S.OUTCOME_SOURCE))
        for s in spans
    )
    assert said == sorted(
        [("client_error", "discovery", "listing"), ("client_error", "arguments", "listing"), ("ok", None, None)]
    )


async def test_what_one_session_listed_names_and_judges_the_next_sessions_calls(silent):
    with serve_http(create_server().streamable_http_app()) as base:
        url = base + "/mcp"
        async with Client(url) as first:
            await first.list_tools()
        async with Client(url) as second:  # lists nothing itself, as a session-per-call framework
            await second.call_tool("get_order_status", {"order_id": "O-7144"})
            await second.call_tool("shop__get_order_status", {})
    (failed,) = silent.spans_named("tools/call get_order_status", SpanKind.CLIENT)  # named, not _OTHER
    assert failed.attributes[S.OUTCOME] == "tool_error"
    (unknown,) = silent.spans_named("tools/call", SpanKind.CLIENT)
    assert (unknown.attributes[S.FAILURE_BOUNDARY], unknown.attributes[S.OUTCOME_SOURCE]) == ("discovery", "listing")
    labels = {S.MCP_METHOD_NAME: "tools/call", S.GEN_AI_TOOL_NAME: "get_order_status", S.OUTCOME: "tool_error"}
    assert silent.total(S.CLIENT_REQUESTS.name, labels) == 1


async def test_another_servers_listing_names_nothing(silent):
    with (
        serve_http(create_server().streamable_http_app()) as one,
        serve_http(create_server().streamable_http_app()) as two,
    ):
        async with Client(one + "/mcp") as first:
            await first.list_tools()
        async with Client(two + "/mcp") as second:
            await second.call_tool("get_order_status", {"order_id": "O-7144"})
    (failed,) = silent.spans_named("tools/call", SpanKind.CLIENT)  # the other server's listing proves nothing here
    assert (failed.attributes[S.OUTCOME], failed.attributes.get(S.OUTCOME_SOURCE)) == ("tool_error", None)


class _Listed:
    def __init__(self, names: list[str], cursor: str | None = None) -> None:
        self.tools = [type("T", (), {"name": n, "input_schema": None})() for n in names]
        self.next_cursor = cursor


def test_the_catalogs_are_bounded_per_server_in_total_and_in_servers(monkeypatch):
    catalog.reset()
    monkeypatch.setattr(catalog, "MAX_PER_SERVER", 3)
    monkeypatch.setattr(catalog, "MAX_TOTAL", 5)
    monkeypatch.setattr(catalog, "MAX_SERVERS", 2)
    try:
        one, two = catalog.for_server("http://a/mcp"), catalog.for_server("http://b/mcp")
        assert one is catalog.for_server("http://a/mcp") and one is not two
        assert catalog.for_server("http://c/mcp") is None  # past the servers' bound
        assert one is not None and two is not None
        catalog.learn_tools(one, _Listed(["a", "b", "c", "d"]))
        assert set(one.tools) == {"a", "b", "c"} and not one.tools_complete  # per server: an incomplete listing
        catalog.learn_tools(two, _Listed(["x", "y", "z"]))
        assert set(two.tools) == {"x", "y"} and not two.tools_complete  # in total
        replied = catalog.UNLISTED
        assert catalog.judge(one, "tools/call", "d", {}, replied) is None  # not held, but the listing was cut
        catalog.reset()
        three = catalog.for_server("http://a/mcp")
        assert three is not None
        catalog.learn_tools(three, _Listed(["a"], cursor="next"))
        assert not three.tools_complete  # a first page proves nothing of what is not on it
        catalog.learn_tools(three, _Listed(["b"]))
        assert three.tools_complete
        assert catalog.judge(three, "tools/call", "c", {}, replied) == catalog.UNLISTED
    finally:
        catalog.reset()


async def test_a_fastmcp_server_sends_its_verdict_too(mcpobs_telemetry):
    from fastmcp_shop import create_server as create_fastmcp

    with serve_http(create_fastmcp().http_app()) as base:
        async with Client(base + "/mcp") as client:
            await _call_all(client)
    server = [v[:2] for v in _verdicts(mcpobs_telemetry, SpanKind.SERVER)]
    client = _verdicts(mcpobs_telemetry, SpanKind.CLIENT)
    assert server == [SERVER_SAYS[label] for label, _, _ in CALLS]
    assert [v[:2] for v in client] == server
    assert [v[2] for v in client] == [None, "server", "server", "server", "server"]
