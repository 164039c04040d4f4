"""mcp 1.x's `ClientSession`: one CLIENT span per request, over every 1.x transport, as on 2.3.

The servers are FastMCP 1 (`clients.shop`), in process, over HTTP and SSE on loopback, and over
stdio in a subprocess; the spans checked are the client's.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import anyio
import mcp.types as types
import pytest
import wrapt
from clients import CALLS, EXPECTED, TRANSPORTS, client_spans, outcome_of, session
from mcp.client.session import ClientSession
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import McpError
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.trace import SpanKind, StatusCode

import mcpobs
from mcpobs import semconv as S
from mcpobs._core import guard as _guard
from mcpobs.testing import CapturedTelemetry, capture

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore:Use `streamable_http_client`:DeprecationWarning")]

CALL = "tools/call get_order_status"
DURATION = S.CLIENT_OPERATION_DURATION.name
REQUESTS = S.CLIENT_REQUESTS.name
HTTP_LIKE = ("http", "http-deprecated", "sse")


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_call_has_one_client_span_with_convention_attributes(mcpobs_telemetry, transport):
    async with session(transport) as client:
        await client.list_tools()
        assert not (await client.call_tool("get_order_status", {"order_id": "O-1873"})).isError
    (span,) = client_spans(mcpobs_telemetry, CALL)
    a = span.attributes
    assert a[S.OUTCOME] == "ok"
    assert a[S.MCP_METHOD_NAME] == "tools/call"
    assert a[S.GEN_AI_TOOL_NAME] == "get_order_status"
    assert a[S.GEN_AI_OPERATION_NAME] == "execute_tool"
    assert a[S.MCP_PROTOCOL_VERSION] == "2025-11-25"
    assert a[S.JSONRPC_REQUEST_ID] == "2"  # initialize 0, tools/list 1
    assert S.ERROR_TYPE not in a
    assert span.status.status_code is StatusCode.UNSET
    if transport in HTTP_LIKE:
        assert a[S.NETWORK_TRANSPORT] == "tcp"
        assert a[S.NETWORK_PROTOCOL_NAME] == "http"
        assert a[S.NETWORK_PROTOCOL_VERSION] == "1.1"
        assert a[S.SERVER_ADDRESS] == "127.0.0.1"
        assert isinstance(a[S.SERVER_PORT], int) and a[S.SERVER_PORT] > 0
    elif transport == "stdio":
        assert a[S.NETWORK_TRANSPORT] == "pipe"
        assert S.SERVER_ADDRESS not in a
    else:
        assert S.NETWORK_TRANSPORT not in a
    (handshake,) = client_spans(mcpobs_telemetry, "initialize")
    assert handshake.attributes[S.SESSION_NEGOTIATED_VERSION] == "2025-11-25"
    assert handshake.attributes[S.MCP_PROTOCOL_VERSION] == "2025-11-25"


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_every_request_and_notification_the_client_sends_has_exactly_one_client_span(mcpobs_telemetry, transport):
    async with session(transport) as client:
        await client.call_tool("get_order_status", {"order_id": "O-1873"})  # lists its tools to validate
        await client.list_prompts()
        await client.get_prompt("refund_reply", {"customer": "Ada"})
        await client.read_resource("shop://catalog")  # type: ignore[arg-type]
        await client.send_ping()
    names = [s.name for s in client_spans(mcpobs_telemetry)]
    assert names == [
        "initialize",
        "notifications/initialized",
        "tools/call get_order_status",
        "tools/list",
        "prompts/list",
        "prompts/get refund_reply",
        "resources/read",
        "ping",
    ]
    (listing,) = client_spans(mcpobs_telemetry, "tools/list")
    (call,) = client_spans(mcpobs_telemetry, CALL)
    assert listing.parent.span_id == call.context.span_id  # the SDK lists inside the call, to validate it
    (prompt,) = client_spans(mcpobs_telemetry, "prompts/get refund_reply")
    assert prompt.attributes[S.GEN_AI_PROMPT_NAME] == "refund_reply"
    (read,) = client_spans(mcpobs_telemetry, "resources/read")
    assert read.attributes[S.MCP_RESOURCE_URI] == "shop://catalog"
    notified = {S.MCP_METHOD_NAME: "notifications/initialized"}
    assert mcpobs_telemetry.total(S.CLIENT_NOTIFICATIONS.name, notified) == 1


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_an_is_error_result_is_a_tool_error_on_the_client(mcpobs_telemetry, transport):
    async with session(transport) as client:
        await client.list_tools()
        assert (await client.call_tool("get_order_status", {"order_id": "O-9999"})).isError
    (span,) = client_spans(mcpobs_telemetry, CALL)
    assert span.attributes[S.OUTCOME] == "tool_error"
    assert span.attributes[S.ERROR_TYPE] == "tool_error"
    assert span.status.status_code is StatusCode.ERROR


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_a_jsonrpc_error_is_an_error_on_the_client_with_its_code(mcpobs_telemetry, transport):
    async with session(transport) as client:
        with pytest.raises(McpError) as raised:
            await client.get_prompt("no_such_prompt")
        assert raised.value.error.code == 0  # FastMCP 1 answers an unknown prompt with code 0
        await client.list_prompts()  # now the client knows every prompt
        with pytest.raises(McpError):
            await client.get_prompt("no_such_prompt")
    unlisted, listed = client_spans(mcpobs_telemetry, "prompts/get")
    # what the wire said: a server's error (code 0), until the client's listing proves it the caller's
    assert outcome_of(unlisted.attributes) == ("server_error", "handler")
    assert unlisted.attributes[S.RPC_RESPONSE_STATUS_CODE] == unlisted.attributes[S.ERROR_TYPE] == "0"
    assert unlisted.status.status_code is StatusCode.ERROR
    assert outcome_of(listed.attributes) == ("client_error", "discovery")
    assert listed.attributes[S.OUTCOME_SOURCE] == "listing"
    assert mcpobs_telemetry.total(REQUESTS, {S.MCP_METHOD_NAME: "prompts/get", S.ERROR_TYPE: "0"}) == 2


@pytest.fixture
def silent() -> Iterator[CapturedTelemetry]:
    """mcpobs on both sides, but the in-process server sends no verdict (`send_verdict=False`)."""
    captured = capture(send_verdict=False)
    try:
        yield captured
    finally:
        mcpobs.uninstrument()
        captured.tracer_provider.shutdown()
        captured.meter_provider.shutdown()


@pytest.mark.parametrize("transport", ["memory", "http", "stdio"])
async def test_a_silent_servers_failures_are_judged_from_the_clients_listing(silent, transport):
    """A 1.x server that sends no verdict (one without mcpobs, or with `send_verdict=False`): the
    wire says `isError`; the listing places what it can."""
    mcpobs_telemetry = silent
    async with session(transport) as client:
        await client.list_tools()
        for _, name, arguments in CALLS:
            await client.call_tool(name, arguments)
    said = [
        (s.name, *outcome_of(s.attributes), s.attributes.get(S.OUTCOME_SOURCE))
        for s in client_spans(mcpobs_telemetry)
        if s.name.startswith("tools/call")
    ]
    assert said == [
        ("tools/call get_order_status", "ok", None, None),
        ("tools/call get_order_status", "tool_error", "handler", None),
        ("tools/call quote_refund", "tool_error", "handler", None),  # a crash the server hides
        ("tools/call", "client_error", "discovery", "listing"),
        ("tools/call quote_refund", "client_error", "arguments", "listing"),
    ]


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_an_instrumented_1x_server_tells_an_instrumented_1x_client_what_it_decided(mcpobs_telemetry, transport):
    """Both sides on mcp 1.x with mcpobs: the client asks, the server answers each failed call with its
    verdict, the client takes it out (its host never sees it) and agrees with the server's span."""
    async with session(transport) as client:  # never listed: only the server can tell them apart
        results = [await client.call_tool(name, arguments) for _, name, arguments in CALLS]
    assert all(S.META_VERDICT not in (r.meta or {}) for r in results)
    calls = [s for s in client_spans(mcpobs_telemetry) if s.name.startswith("tools/call")]
    served = sorted(
        (s for s in mcpobs_telemetry.spans() if s.kind is SpanKind.SERVER and s.name.startswith("tools/call")),
        key=lambda s: s.start_time,
    )
    assert [outcome_of(s.attributes) for s in calls] == EXPECTED
    assert [outcome_of(s.attributes) for s in served] == EXPECTED


def schema_liar() -> Server:
    """A lowlevel 1.x server whose tool declares an output schema and then returns something else."""
    server: Server = Server("liar")

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        schema = {"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]}
        return [types.Tool(name="invoice", inputSchema={"type": "object"}, outputSchema=schema)]

    @server.call_tool(validate_input=False)
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="oops")], structuredContent={"total": "twelve"}
        )

    return server


async def test_a_result_failing_output_validation_is_an_error_on_the_call_span(mcpobs_telemetry):
    async with session("memory", schema_liar()) as client:
        with pytest.raises(RuntimeError, match="Invalid structured content"):
            await client.call_tool("invoice", {})
    (span,) = client_spans(mcpobs_telemetry, "tools/call invoice")  # named: the SDK listed inside the call
    assert span.attributes[S.ERROR_TYPE] == S.OUTPUT_VALIDATION
    assert span.attributes[S.OUTCOME] == "server_error"
    assert span.status.status_code is StatusCode.ERROR
    assert not span.events  # the offending content is not recorded
    (listing,) = client_spans(mcpobs_telemetry, "tools/list")
    assert listing.parent.span_id == span.context.span_id
    assert mcpobs_telemetry.total(DURATION, {S.ERROR_TYPE: S.OUTPUT_VALIDATION}) == 1


@pytest.mark.parametrize("transport", ["memory", "http", "stdio"])
async def test_a_timed_out_call_is_a_timeout_and_not_a_latency_sample(mcpobs_telemetry, transport):
    async with session(transport) as client:
        await client.list_tools()
        with pytest.raises(McpError) as raised:
            await client.call_tool("wait_for_stock", {"sku": "KG-1031"}, read_timeout_seconds=timedelta(seconds=0.2))
        assert raised.value.error.code == 408
    (span,) = client_spans(mcpobs_telemetry, "tools/call wait_for_stock")
    assert span.attributes[S.OUTCOME] == "server_error"
    assert span.attributes[S.ERROR_TYPE] == S.TIMEOUT
    assert span.status.status_code is StatusCode.ERROR
    tool = {S.GEN_AI_TOOL_NAME: "wait_for_stock"}
    assert mcpobs_telemetry.total(DURATION, tool) == 0
    assert mcpobs_telemetry.total(REQUESTS, {**tool, S.ERROR_TYPE: S.TIMEOUT}) == 1
    # mcp 1.x tells the server nothing when it stops waiting: no notifications/cancelled is sent
    assert not client_spans(mcpobs_telemetry, "notifications/cancelled")


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_a_call_the_host_gives_up_on_is_cancelled_not_an_error(mcpobs_telemetry, transport):
    async with session(transport) as client:
        await client.list_tools()
        with anyio.move_on_after(0.2) as scope:
            await client.call_tool("wait_for_stock", {"sku": "KG-1031"})
        assert scope.cancelled_caught
    (span,) = client_spans(mcpobs_telemetry, "tools/call wait_for_stock")
    assert span.attributes[S.OUTCOME] == "cancelled"
    assert S.ERROR_TYPE not in span.attributes
    assert span.status.status_code is StatusCode.UNSET
    assert mcpobs_telemetry.total(DURATION, {S.GEN_AI_TOOL_NAME: "wait_for_stock"}) == 0
    assert not client_spans(mcpobs_telemetry, "notifications/cancelled")  # 1.x sends none


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_a_call_the_server_answers_as_cancelled_is_cancelled(mcpobs_telemetry, transport):
    """A host that sends notifications/cancelled itself: a 1.x server answers code 0 "Request cancelled"."""
    async with session(transport) as client:
        await client.list_tools()

        async def give_up() -> None:
            await anyio.sleep(0.2)
            cancel = types.CancelledNotification(params=types.CancelledNotificationParams(requestId=2))
            await client.send_notification(types.ClientNotification(cancel))

        async with anyio.create_task_group() as tg:
            tg.start_soon(give_up)
            with pytest.raises(McpError) as raised:
                await client.call_tool("wait_for_stock", {"sku": "KG-1031"})
        assert (raised.value.error.code, raised.value.error.message) == (0, "Request cancelled")
    (span,) = client_spans(mcpobs_telemetry, "tools/call wait_for_stock")
    assert span.attributes[S.JSONRPC_REQUEST_ID] == "2"
    assert span.attributes[S.OUTCOME] == "cancelled"
    assert span.status.status_code is StatusCode.UNSET
    (notice,) = client_spans(mcpobs_telemetry, "notifications/cancelled")
    assert notice.attributes[S.OUTCOME] == "ok"


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_client_duration_histogram_has_convention_buckets_and_bounded_labels(mcpobs_telemetry, transport):
    async with session(transport) as client:
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
        await client.call_tool("get_order_status", {"order_id": "O-2001"})
    calls = {s.context.span_id for s in client_spans(mcpobs_telemetry, CALL)}
    (point,) = [
        p for p in mcpobs_telemetry.points(DURATION) if p.attributes.get(S.GEN_AI_TOOL_NAME) == "get_order_status"
    ]
    assert point.count == 2
    assert tuple(point.explicit_bounds) == S.DURATION_BUCKETS
    assert set(point.attributes) <= set(S.CLIENT_OPERATION_DURATION.attributes)
    assert point.attributes[S.OUTCOME] == "ok"
    assert point.attributes[S.MCP_PROTOCOL_VERSION] == "2025-11-25"
    assert point.exemplars and {e.span_id for e in point.exemplars} <= calls  # each sample points at its call
    if transport == "http":
        assert point.attributes[S.NETWORK_TRANSPORT] == "tcp"
    for p in mcpobs_telemetry.points(REQUESTS):
        assert set(p.attributes) <= set(S.CLIENT_REQUESTS.attributes)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_sessions_life_is_its_duration(mcpobs_telemetry, transport):
    async with session(transport) as client:
        await client.send_ping()
        await anyio.sleep(0.05)
    (point,) = mcpobs_telemetry.points(S.CLIENT_SESSION_DURATION.name)
    assert point.count == 1
    assert point.sum >= 0.05
    assert point.attributes[S.MCP_PROTOCOL_VERSION] == "2025-11-25"
    assert S.ERROR_TYPE not in point.attributes
    expected = {"memory": None, "stdio": "pipe"}.get(transport, "tcp")
    assert point.attributes.get(S.NETWORK_TRANSPORT) == expected


async def test_after_listing_only_listed_tools_name_a_client_span(mcpobs_telemetry):
    async with session("memory") as client:
        await client.list_tools()
        await client.call_tool("invented_by_a_model", {})
    (span,) = client_spans(mcpobs_telemetry, "tools/call")
    assert span.attributes[S.GEN_AI_TOOL_NAME] == "invented_by_a_model"  # the raw name stays findable
    labels = {p.attributes.get(S.GEN_AI_TOOL_NAME) for p in mcpobs_telemetry.points(REQUESTS)}
    assert labels == {None, S.OTHER}


class _Exploding(SpanProcessor):
    def __init__(self, where: str) -> None:
        self.where = where

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        if self.where == "start":
            raise RuntimeError("processor broke on start")

    def on_end(self, span: Any) -> None:
        if self.where == "end":
            raise RuntimeError("processor broke on end")


@pytest.mark.parametrize("where", ["start", "end"])
@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_a_broken_pipeline_never_changes_what_the_client_gets(transport, where):
    from mcpobs.testing import capture

    async def outcomes() -> list[Any]:
        async with session(transport) as client:
            found: list[Any] = [
                (await client.call_tool("get_order_status", {"order_id": "O-1873"})).structuredContent,
                (await client.call_tool("get_order_status", {"order_id": "O-0"})).isError,
                [t.name for t in (await client.list_tools()).tools],
            ]
            with pytest.raises(McpError) as raised:
                await client.call_tool(
                    "wait_for_stock", {"sku": "KG-1031"}, read_timeout_seconds=timedelta(seconds=0.1)
                )
            found.append(raised.value.error.code)
            return found

    expected = await outcomes()  # not instrumented
    reported = set(_guard._seen)
    telemetry = capture()
    telemetry.tracer_provider.add_span_processor(_Exploding(where))
    try:
        assert isinstance(vars(ClientSession)["send_request"], wrapt.FunctionWrapper)  # instrumented
        assert await outcomes() == expected
    finally:
        mcpobs.uninstrument()
        _guard._seen.intersection_update(reported)
