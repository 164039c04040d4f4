"""The client side: one CLIENT span per request, its outcome, and the client histogram."""

from __future__ import annotations

from contextlib import ExitStack

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.trace import SpanKind, StatusCode
from pydantic import BaseModel
from shop import create_server
from transports import TRANSPORTS, client_for, client_spans, eventually, run_calls, serve_http

import mcpobs
from mcpobs import semconv as S
from mcpobs._client.names import ClientNames
from mcpobs._core import guard as _guard

pytestmark = pytest.mark.anyio

CALL = "tools/call get_order_status"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_call_has_one_client_span_with_convention_attributes(mcpobs_telemetry, transport):
    async def calls(client):
        assert not (await client.call_tool("get_order_status", {"order_id": "O-1873"})).is_error

    await run_calls(transport, calls)
    (span,) = client_spans(mcpobs_telemetry, CALL)
    a = span.attributes
    assert a[S.OUTCOME] == "ok"
    assert a[S.MCP_METHOD_NAME] == "tools/call"
    assert a[S.GEN_AI_TOOL_NAME] == "get_order_status"
    assert a[S.GEN_AI_OPERATION_NAME] == "execute_tool"
    assert a[S.MCP_PROTOCOL_VERSION] == ("2025-11-25" if transport == "legacy" else "2026-07-28")
    assert S.ERROR_TYPE not in a
    assert span.status.status_code is StatusCode.UNSET
    if transport != "auto":  # the direct dispatcher mints ids the client never sees
        assert a[S.JSONRPC_REQUEST_ID]
    if transport == "http":
        assert a[S.NETWORK_TRANSPORT] == "tcp"
        assert a[S.SERVER_ADDRESS] == "127.0.0.1"
        assert isinstance(a[S.SERVER_PORT], int) and a[S.SERVER_PORT] > 0
    else:
        assert S.SERVER_ADDRESS not in a
    assert not [s for s in mcpobs_telemetry.spans() if s.name.startswith("MCP send")]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_every_request_the_client_sends_has_exactly_one_client_span(mcpobs_telemetry, transport):
    async def calls(client):
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
        await client.list_prompts()  # a client names the prompts it listed
        await client.get_prompt("refund_reply", {"customer": "Ada"})

    await run_calls(transport, calls)
    client = [s for s in mcpobs_telemetry.spans() if s.kind is SpanKind.CLIENT]
    server = [s for s in mcpobs_telemetry.spans() if s.kind is SpanKind.SERVER]
    # every server span but none has a client span as its parent: one span each side per request
    by_id = {s.context.span_id: s for s in client}
    assert all(s.parent is not None and s.parent.span_id in by_id for s in server)
    assert len({s.parent.span_id for s in server}) == len(server) == len(client)
    first = "initialize" if transport == "legacy" else "server/discover"
    assert [s.name for s in sorted(client, key=lambda s: s.start_time)][:1] == [first]
    assert client_spans(mcpobs_telemetry, "prompts/get refund_reply")[0].attributes[S.GEN_AI_PROMPT_NAME] == (
        "refund_reply"
    )


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_an_is_error_result_is_a_tool_error_on_the_client(mcpobs_telemetry, transport):
    async def calls(client):
        await client.list_tools()  # a client names the tools it listed
        assert (await client.call_tool("get_order_status", {"order_id": "O-9999"})).is_error

    await run_calls(transport, calls)
    (span,) = client_spans(mcpobs_telemetry, CALL)
    assert span.attributes[S.OUTCOME] == "tool_error"
    assert span.attributes[S.ERROR_TYPE] == "tool_error"
    assert span.status.status_code is StatusCode.ERROR


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_jsonrpc_error_is_an_error_on_the_client_with_its_code(mcpobs_telemetry, transport):
    async def calls(client):
        with pytest.raises(MCPError) as raised:
            await client.read_resource("shop://no-such-thing")
        assert raised.value.error.code in (-32002, -32602)

    await run_calls(transport, calls)
    (span,) = client_spans(mcpobs_telemetry, "resources/read")
    code = span.attributes[S.RPC_RESPONSE_STATUS_CODE]
    assert span.attributes[S.ERROR_TYPE] == code
    assert span.attributes[S.OUTCOME] == "client_error"  # the caller's mistake, as the server saw it
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes[S.MCP_RESOURCE_URI] == "shop://no-such-thing"
    assert (
        mcpobs_telemetry.total(S.CLIENT_REQUESTS.name, {S.MCP_METHOD_NAME: "resources/read", S.ERROR_TYPE: code}) == 1
    )


def schema_liar() -> Server:
    """A server whose tool declares an output schema and then returns something else."""

    async def list_tools(ctx, params):
        schema = {"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]}
        return types.ListToolsResult(
            tools=[types.Tool(name="invoice", input_schema={"type": "object"}, output_schema=schema)]
        )

    async def call_tool(ctx, params):
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="oops")], structured_content={"total": "twelve"}
        )

    return Server("liar", on_list_tools=list_tools, on_call_tool=call_tool)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_result_failing_output_validation_is_an_error_on_the_call_span(mcpobs_telemetry, transport):
    async def calls(client):
        with pytest.raises(RuntimeError, match="Invalid structured content"):
            await client.call_tool("invoice", {})

    await run_calls(transport, calls, schema_liar())
    (span,) = client_spans(mcpobs_telemetry, "tools/call invoice")
    assert span.attributes[S.ERROR_TYPE] == S.OUTPUT_VALIDATION
    assert span.attributes[S.OUTCOME] == "server_error"
    assert span.status.status_code is StatusCode.ERROR
    assert not span.events  # the offending content is not recorded
    # the tools/list the SDK issues to fetch the schema nests under the call
    (listing,) = client_spans(mcpobs_telemetry, "tools/list")
    assert listing.parent.span_id == span.context.span_id
    # the server answered fine: its span is ok (a lowlevel server names tools once it has listed them)
    (server,) = mcpobs_telemetry.spans_named("tools/call", SpanKind.SERVER)
    assert server.attributes[S.OUTCOME] == "ok"
    assert mcpobs_telemetry.total(S.CLIENT_OPERATION_DURATION.name, {S.ERROR_TYPE: S.OUTPUT_VALIDATION}) == 1


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_timed_out_call_is_a_timeout_and_not_a_latency_sample(mcpobs_telemetry, transport):
    async def calls(client):
        await client.list_tools()
        with pytest.raises(MCPError):
            await client.call_tool("wait_for_stock", {"sku": "KG-1031"}, read_timeout_seconds=0.2)

    await run_calls(transport, calls)
    (span,) = client_spans(mcpobs_telemetry, "tools/call wait_for_stock")
    # A deadline passing unanswered counts against availability; only the caller giving up is `cancelled`.
    assert span.attributes[S.OUTCOME] == "server_error"
    assert span.attributes[S.ERROR_TYPE] == S.TIMEOUT
    assert span.status.status_code is StatusCode.ERROR
    tool = {S.GEN_AI_TOOL_NAME: "wait_for_stock"}
    assert mcpobs_telemetry.total(S.CLIENT_OPERATION_DURATION.name, tool) == 0
    assert mcpobs_telemetry.total(S.CLIENT_REQUESTS.name, {**tool, S.ERROR_TYPE: S.TIMEOUT}) == 1


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_call_the_host_gives_up_on_is_cancelled_not_an_error(mcpobs_telemetry, transport):
    async def calls(client):
        await client.list_tools()
        with anyio.move_on_after(0.2) as scope:
            await client.call_tool("wait_for_stock", {"sku": "KG-1031"})
        assert scope.cancelled_caught

    await run_calls(transport, calls)
    (span,) = client_spans(mcpobs_telemetry, "tools/call wait_for_stock")
    assert span.attributes[S.OUTCOME] == "cancelled"
    assert S.ERROR_TYPE not in span.attributes
    assert span.status.status_code is StatusCode.UNSET
    assert mcpobs_telemetry.total(S.CLIENT_OPERATION_DURATION.name, {S.GEN_AI_TOOL_NAME: "wait_for_stock"}) == 0


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_client_duration_histogram_has_convention_buckets_and_bounded_labels(mcpobs_telemetry, transport):
    async def calls(client):
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
        await client.call_tool("get_order_status", {"order_id": "O-2001"})

    await run_calls(transport, calls)
    points = [
        p
        for p in mcpobs_telemetry.points(S.CLIENT_OPERATION_DURATION.name)
        if p.attributes.get(S.GEN_AI_TOOL_NAME) == "get_order_status"
    ]
    (point,) = points
    assert point.count == 2
    assert tuple(point.explicit_bounds) == S.DURATION_BUCKETS
    assert set(point.attributes) <= set(S.CLIENT_OPERATION_DURATION.attributes)
    assert point.attributes[S.OUTCOME] == "ok"
    assert point.attributes[S.MCP_METHOD_NAME] == "tools/call"
    if transport == "http":
        assert point.attributes[S.NETWORK_TRANSPORT] == "tcp"
    for p in mcpobs_telemetry.points(S.CLIENT_REQUESTS.name):
        assert set(p.attributes) <= set(S.CLIENT_REQUESTS.attributes)


async def test_after_listing_only_listed_tools_name_a_client_span(mcpobs_telemetry):
    async with Client(create_server()) as client:
        await client.list_tools()
        await client.call_tool("invented_by_a_model", {})
    (span,) = client_spans(mcpobs_telemetry, "tools/call")
    assert span.attributes[S.GEN_AI_TOOL_NAME] == "invented_by_a_model"  # the raw name stays findable
    labels = {p.attributes.get(S.GEN_AI_TOOL_NAME) for p in mcpobs_telemetry.points(S.CLIENT_REQUESTS.name)}
    assert labels == {None, S.OTHER}


def test_client_names_are_the_listed_ones_capped_across_sessions():
    names = ClientNames()
    assert names.bound("tool_1", None) == S.OTHER  # nothing listed: nothing named
    listing = {f"tool_{i}" for i in range(S.MAX_LEARNED_NAMES + 50)}
    kept = [names.bound(f"tool_{i}", listing) for i in range(S.MAX_LEARNED_NAMES + 50)]
    assert len(set(kept) - {S.OTHER}) == S.MAX_LEARNED_NAMES
    assert kept[-1] == S.OTHER
    assert names.bound("tool_1", listing) == "tool_1"
    assert names.bound("tool_1", {"other"}) == S.OTHER  # listed by another session only
    assert names.bound(["not", "a", "name"], listing) == S.OTHER


async def test_uninstrument_gives_the_sdk_its_own_client_span_back():
    import mcp.shared._otel as sdk_otel
    import mcp.shared.jsonrpc_dispatcher as jd
    from mcp.client.session import ClientSession

    from mcpobs.testing import capture

    capture()
    assert jd.otel_span is not sdk_otel.otel_span
    mcpobs.uninstrument()
    assert jd.otel_span is sdk_otel.otel_span
    assert not hasattr(ClientSession.send_request, "__wrapped__")


async def slow_human(context, params):
    await anyio.sleep(0.1)  # a person reading the question
    return types.ElicitResult(action="accept", content={"approved": True})


async def some_roots(context):
    return types.ListRootsResult(roots=[types.Root(uri="file:///shop")])


def shop_client(transport: str, server, base_url: str | None) -> Client:
    target = base_url + "/mcp" if transport == "http" else server
    mode = "auto" if transport == "http" else transport
    return Client(target, mode=mode, elicitation_callback=slow_human, list_roots_callback=some_roots)


@pytest.mark.parametrize("transport", ["auto", "http"])
async def test_every_round_and_every_answer_nests_under_the_calls_span(mcpobs_telemetry, transport):
    server = create_server()
    with ExitStack() as stack:
        base_url = stack.enter_context(serve_http(server.streamable_http_app())) if transport == "http" else None
        async with shop_client(transport, server, base_url) as client:
            await client.list_tools()
            result = await client.call_tool("confirm_cancel", {"order_id": "O-1873"})
    assert result.content[0].text == "O-1873 cancelled after asked-twice"
    rounds = sorted(client_spans(mcpobs_telemetry, "tools/call confirm_cancel"), key=lambda s: s.start_time)
    call, second, third = rounds
    assert call.attributes[S.MRTR_ROUND] == 1
    assert call.attributes[S.OUTCOME] == "ok"  # the call's span ends with the operation's outcome
    assert list(call.attributes[S.MRTR_INPUT_METHODS]) == ["elicitation/create"]
    assert (second.attributes[S.MRTR_ROUND], second.attributes[S.OUTCOME]) == (2, "pending_input")
    assert (third.attributes[S.MRTR_ROUND], third.attributes[S.OUTCOME]) == (3, "ok")
    assert second.parent.span_id == third.parent.span_id == call.context.span_id
    answers = mcpobs_telemetry.spans_named("elicitation/create", SpanKind.INTERNAL)
    assert len(answers) == 2
    assert all(a.parent.span_id == call.context.span_id for a in answers)
    assert all((a.end_time - a.start_time) / 1e9 >= 0.1 for a in answers)  # the slow human shows
    assert call.end_time >= third.end_time  # the call's span covers every round
    # each round's server span is the child of that round's client span
    servers = mcpobs_telemetry.spans_named("tools/call confirm_cancel", SpanKind.SERVER)
    assert {s.parent.span_id for s in servers} == {r.context.span_id for r in rounds}
    # the pending rounds are not latency samples; the final round is
    tool = {S.GEN_AI_TOOL_NAME: "confirm_cancel"}
    assert mcpobs_telemetry.total(S.CLIENT_OPERATION_DURATION.name, tool) == 1
    assert mcpobs_telemetry.total(S.CLIENT_REQUESTS.name, {**tool, S.OUTCOME: "pending_input"}) == 2


async def test_two_questions_in_one_round_are_both_answered_under_the_call(mcpobs_telemetry):
    async with shop_client("auto", create_server(), None) as client:
        await client.list_tools()
        await client.call_tool("approve_refund", {"order_id": "O-1873"})
    call, final = sorted(client_spans(mcpobs_telemetry, "tools/call approve_refund"), key=lambda s: s.start_time)
    assert sorted(call.attributes[S.MRTR_INPUT_METHODS]) == ["elicitation/create", "roots/list"]
    answers = [s for s in mcpobs_telemetry.spans() if s.kind is SpanKind.INTERNAL]
    assert sorted(a.name for a in answers) == ["elicitation/create", "roots/list"]
    assert all(a.parent.span_id == call.context.span_id for a in answers)
    assert final.parent.span_id == call.context.span_id


async def test_a_refused_question_ends_the_call_as_an_error(mcpobs_telemetry):
    async def refuse(context, params):
        return types.ErrorData(code=-32600, message="the user closed the dialog")

    async with Client(create_server(), elicitation_callback=refuse) as client:
        await client.list_tools()
        with pytest.raises(MCPError):
            await client.call_tool("confirm_cancel", {"order_id": "O-1873"})
    (call,) = client_spans(mcpobs_telemetry, "tools/call confirm_cancel")
    assert call.attributes[S.ERROR_TYPE] == "-32600"
    assert call.status.status_code is StatusCode.ERROR
    (answer,) = mcpobs_telemetry.spans_named("elicitation/create", SpanKind.INTERNAL)
    assert answer.attributes[S.OUTCOME] == "client_error"


@pytest.mark.parametrize("transport", ["legacy", "legacy-http"])
async def test_a_servers_own_request_to_the_client_has_client_and_server_roles(mcpobs_telemetry, transport):
    server = create_server()
    with ExitStack() as stack:
        if transport == "legacy-http":
            base_url = stack.enter_context(serve_http(server.streamable_http_app()))
            client = Client(
                base_url + "/mcp", mode="legacy", elicitation_callback=slow_human, list_roots_callback=some_roots
            )
        else:
            client = shop_client("legacy", server, None)
        async with client:
            await client.call_tool("approve_refund", {"order_id": "O-1873"})
    (tool,) = mcpobs_telemetry.spans_named("tools/call approve_refund", SpanKind.SERVER)
    for method in ("elicitation/create", "roots/list"):
        (asked,) = mcpobs_telemetry.spans_named(method, SpanKind.CLIENT)  # the server asks: it is the client
        (answered,) = mcpobs_telemetry.spans_named(method, SpanKind.SERVER)  # the client answers: its server
        assert asked.parent.span_id == tool.context.span_id
        assert answered.parent.span_id == asked.context.span_id
        assert asked.attributes[S.OUTCOME] == answered.attributes[S.OUTCOME] == "ok"
        assert asked.attributes[S.JSONRPC_REQUEST_ID] == answered.attributes[S.JSONRPC_REQUEST_ID]
    assert not [s for s in mcpobs_telemetry.spans() if s.name.startswith("MCP send")]


@pytest.mark.parametrize("transport", ["auto", "http"])
async def test_a_listen_stream_has_one_client_span_from_request_to_close(mcpobs_telemetry, transport):
    server = create_server()
    with ExitStack() as stack:
        base_url = stack.enter_context(serve_http(server.streamable_http_app())) if transport == "http" else None
        async with client_for(transport, server, base_url) as client:
            async with client.listen(tools_list_changed=True) as subscription:
                assert subscription.honored.tools_list_changed
                await anyio.sleep(0.05)
            (received,) = await eventually(
                lambda: mcpobs_telemetry.spans_named("subscriptions/listen", SpanKind.SERVER)
            )
    (stream,) = client_spans(mcpobs_telemetry, "subscriptions/listen")
    assert stream.attributes[S.OUTCOME] == "ok"
    assert (stream.end_time - stream.start_time) / 1e9 >= 0.05
    assert received.parent.span_id == stream.context.span_id


async def test_a_client_latency_sample_carries_an_exemplar_of_its_span(mcpobs_telemetry):
    async with Client(create_server()) as client:
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
    (span,) = client_spans(mcpobs_telemetry, CALL)
    (point,) = [
        p
        for p in mcpobs_telemetry.points(S.CLIENT_OPERATION_DURATION.name)
        if p.attributes.get(S.GEN_AI_TOOL_NAME) == "get_order_status"
    ]
    assert [e.span_id for e in point.exemplars] == [span.context.span_id]


class _Exploding(SpanProcessor):
    def __init__(self, where: str) -> None:
        self.where = where

    def on_start(self, span, parent_context=None):
        if self.where == "start":
            raise RuntimeError("processor broke on start")

    def on_end(self, span):
        if self.where == "end":
            raise RuntimeError("processor broke on end")


@pytest.mark.parametrize("where", ["start", "end"])
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_broken_pipeline_never_changes_what_the_client_gets(transport, where):
    from mcpobs.testing import capture

    async def outcomes(server) -> list:
        with ExitStack() as stack:
            base_url = stack.enter_context(serve_http(server.streamable_http_app())) if transport == "http" else None
            async with shop_client(transport, server, base_url) as client:
                found = [
                    (await client.call_tool("get_order_status", {"order_id": "O-1873"})).structured_content,
                    (await client.call_tool("get_order_status", {"order_id": "O-0"})).is_error,
                    (await client.call_tool("approve_refund", {"order_id": "O-1873"})).content[0].text,
                ]
                with pytest.raises(MCPError):
                    await client.call_tool("wait_for_stock", {"sku": "KG-1031"}, read_timeout_seconds=0.1)
                if transport != "legacy":
                    async with client.listen(tools_list_changed=True) as subscription:
                        found.append(subscription.honored.tools_list_changed)
                return found

    expected = await outcomes(create_server())  # not instrumented
    reported = set(_guard._seen)
    telemetry = capture()
    telemetry.tracer_provider.add_span_processor(_Exploding(where))
    try:
        assert await outcomes(create_server()) == expected
    finally:
        mcpobs.uninstrument()
        _guard._seen.intersection_update(reported)  # other tests still see a first report warned


async def test_a_raw_request_outside_the_session_still_gets_one_client_span(mcpobs_telemetry):
    from transports import send_raw

    async with Client(create_server(), mode="legacy") as client:
        with pytest.raises(MCPError):
            await send_raw(client, "bogus/method", {})
    (span,) = mcpobs_telemetry.spans_named(S.OTHER, SpanKind.CLIENT)
    assert span.attributes[S.OUTCOME] == "client_error"
    assert span.attributes[S.RPC_RESPONSE_STATUS_CODE] == "-32601"
    (server,) = mcpobs_telemetry.spans_named(S.OTHER, SpanKind.SERVER)
    assert server.parent.span_id == span.context.span_id
    assert not [s for s in mcpobs_telemetry.spans() if s.name.startswith("MCP send")]


class Release1(BaseModel):
    sku: str
    on_hand: int


class Release2(BaseModel):
    sku: str
    count: int


def stock_v1(sku: str) -> Release1:
    """Stock of one SKU."""
    return Release1(sku=sku, on_hand=3)


def stock_v2(sku: str) -> Release2:
    """Stock of one SKU."""
    return Release2(sku=sku, count=3)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_client_that_listed_an_old_schema_is_flagged_stale_by_the_server(mcpobs_telemetry, transport):
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("stock")
    server.add_tool(stock_v1, name="check_stock")

    async def calls(client):
        await client.list_tools()
        await client.call_tool("check_stock", {"sku": "KG-1031"})
        server.remove_tool("check_stock")  # a release while the client is connected
        server.add_tool(stock_v2, name="check_stock")
        with pytest.raises(RuntimeError, match="'on_hand' is a required property"):
            await client.call_tool("check_stock", {"sku": "KG-1031"})

    await run_calls(transport, calls, server)
    before, after = mcpobs_telemetry.spans_named("tools/call check_stock", SpanKind.SERVER)
    assert S.TOOL_SCHEMA_STALE not in before.attributes  # written only when true
    assert after.attributes[S.TOOL_SCHEMA_STALE] is True
    (_, failed) = client_spans(mcpobs_telemetry, "tools/call check_stock")
    assert failed.attributes[S.ERROR_TYPE] == S.OUTPUT_VALIDATION
    assert mcpobs_telemetry.total(S.STALE_CALLS.name, {S.GEN_AI_TOOL_NAME: "check_stock"}) == 1
