"""Each row of the outcome table, over the real SDK, in memory (both modes) and over HTTP."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError
from opentelemetry.trace import SpanKind, StatusCode
from shop import create_server
from transports import TRANSPORTS, run_calls, send_raw, server_spans

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_successful_call_is_ok_with_convention_attributes(mcpobs_telemetry, transport):
    async def calls(client):
        result = await client.call_tool("get_order_status", {"order_id": "O-1873"})
        assert not result.is_error

    await run_calls(transport, calls)
    (span,) = server_spans(mcpobs_telemetry, "tools/call get_order_status")
    a = span.attributes
    assert a[S.OUTCOME] == "ok"
    assert S.FAILURE_BOUNDARY not in a and S.ERROR_TYPE not in a
    assert a[S.MCP_METHOD_NAME] == "tools/call"
    assert a[S.GEN_AI_TOOL_NAME] == "get_order_status"
    assert a[S.GEN_AI_OPERATION_NAME] == "execute_tool"
    assert a[S.JSONRPC_REQUEST_ID]
    assert a[S.MCP_PROTOCOL_VERSION] in ("2026-07-28", "2025-11-25")
    assert a[S.SERVER_NAME] == "shop"
    assert span.status.status_code is StatusCode.UNSET
    if transport == "http":
        assert a[S.NETWORK_TRANSPORT] == "tcp"
    assert (
        mcpobs_telemetry.total(
            S.SERVER_OPERATION_DURATION.name, {S.GEN_AI_TOOL_NAME: "get_order_status", S.OUTCOME: "ok"}
        )
        == 1
    )


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_tool_error_is_an_error_at_the_handler(mcpobs_telemetry, transport):
    async def calls(client):
        result = await client.call_tool("get_order_status", {"order_id": "O-9999"})
        assert result.is_error

    await run_calls(transport, calls)
    (span,) = server_spans(mcpobs_telemetry, "tools/call get_order_status")
    assert span.attributes[S.OUTCOME] == "tool_error"
    assert span.attributes[S.FAILURE_BOUNDARY] == "handler"
    assert span.attributes[S.ERROR_TYPE] == "tool_error"
    assert span.status.status_code is StatusCode.ERROR


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_crash_in_a_tool_is_a_server_error_with_the_exception(mcpobs_telemetry, transport):
    async def calls(client):
        await client.list_tools()  # the client names the tools it listed
        result = await client.call_tool("quote_refund", {"order_id": "O-1873", "amount_cents": -1})
        assert result.is_error  # the SDK still answers with a result

    await run_calls(transport, calls)
    (span,) = server_spans(mcpobs_telemetry, "tools/call quote_refund")
    assert span.attributes[S.OUTCOME] == "server_error"
    assert span.attributes[S.FAILURE_BOUNDARY] == "handler"
    # On the wire an isError result: error.type is tool_error, as the client records it (the
    # conventions' value); the exception's class is in the exception event.
    assert span.attributes[S.ERROR_TYPE] == "tool_error"
    assert span.status.status_code is StatusCode.ERROR
    # By default the exception's type, never its message (the tool wrote it: it may hold anyone's data).
    assert span.status.description == "RuntimeError"
    (event,) = [e for e in span.events if e.name == "exception"]
    assert event.attributes["exception.type"].endswith("RuntimeError")
    assert "exception.message" not in event.attributes
    assert str(event.attributes["exception.stacktrace"]).rstrip().endswith("\nRuntimeError")  # no message line
    assert "quote_refund" in event.attributes["exception.stacktrace"]  # the frames: where it was raised
    (client,) = [s for s in mcpobs_telemetry.spans_named("tools/call quote_refund") if s is not span]
    assert client.attributes[S.ERROR_TYPE] == span.attributes[S.ERROR_TYPE]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_unknown_tool_is_the_callers_mistake_at_discovery(mcpobs_telemetry, transport):
    async def calls(client):
        result = await client.call_tool("billing__create_invoice", {})
        assert result.is_error

    await run_calls(transport, calls)
    (span,) = server_spans(mcpobs_telemetry, "tools/call")  # no caller-supplied name in the span name
    assert span.attributes[S.OUTCOME] == "client_error"
    assert span.attributes[S.FAILURE_BOUNDARY] == "discovery"
    assert S.ERROR_TYPE not in span.attributes
    assert span.status.status_code is StatusCode.UNSET
    assert span.attributes[S.GEN_AI_TOOL_NAME] == "billing__create_invoice"  # on the span, bounded
    labels = [p.attributes for p in mcpobs_telemetry.points(S.SERVER_REQUESTS.name)]
    assert {S.GEN_AI_TOOL_NAME: S.OTHER}.items() <= next(
        lbl for lbl in labels if lbl.get(S.OUTCOME) == "client_error"
    ).items()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_invalid_arguments_are_the_callers_mistake_at_arguments(mcpobs_telemetry, transport):
    async def calls(client):
        result = await client.call_tool("quote_refund", {"order_id": "O-1873", "amount_cents": "lots"})
        assert result.is_error

    await run_calls(transport, calls)
    (span,) = server_spans(mcpobs_telemetry, "tools/call quote_refund")
    assert span.attributes[S.OUTCOME] == "client_error"
    assert span.attributes[S.FAILURE_BOUNDARY] == "arguments"
    assert span.status.status_code is StatusCode.UNSET
    assert (
        mcpobs_telemetry.total(S.SERVER_REQUESTS.name, {S.OUTCOME: "client_error", S.FAILURE_BOUNDARY: "arguments"})
        == 1
    )


@pytest.mark.parametrize("transport", ["auto", "legacy"])
async def test_unknown_method_is_a_client_error_with_its_code(mcpobs_telemetry, transport):
    async def calls(client):
        with pytest.raises(MCPError):
            await send_raw(client, "bogus/method-4711", {})
        with pytest.raises(MCPError):
            await send_raw(client, "tools/call", {"arguments": 5})  # malformed: no name

    await run_calls(transport, calls)
    (unknown,) = server_spans(mcpobs_telemetry, S.OTHER)
    assert unknown.attributes[S.MCP_METHOD_NAME] == S.OTHER
    assert unknown.attributes[S.OUTCOME] == "client_error"
    assert unknown.attributes[S.FAILURE_BOUNDARY] == "capability"
    assert unknown.attributes[S.RPC_RESPONSE_STATUS_CODE] == "-32601"
    assert unknown.status.status_code is StatusCode.UNSET
    (malformed,) = server_spans(mcpobs_telemetry, "tools/call")
    assert malformed.attributes[S.OUTCOME] == "client_error"
    assert malformed.attributes[S.FAILURE_BOUNDARY] == "arguments"
    assert malformed.attributes[S.RPC_RESPONSE_STATUS_CODE] == "-32602"


async def test_prompts_are_named_only_when_registered(mcpobs_telemetry):
    async def calls(client):
        await client.get_prompt("refund_reply", {"customer": "Ada"})
        with pytest.raises(MCPError):
            await client.get_prompt("no_such_prompt", {})

    await run_calls("auto", calls)
    assert mcpobs_telemetry.server_span("prompts/get refund_reply").attributes[S.OUTCOME] == "ok"
    unknown = mcpobs_telemetry.server_span("prompts/get")
    assert unknown.attributes[S.OUTCOME] == "client_error"
    assert unknown.attributes[S.FAILURE_BOUNDARY] == "discovery"


async def test_mcp_error_raised_by_a_tool_is_a_server_error_with_its_code(mcpobs_telemetry):
    server = create_server()

    @server.tool()
    def ledger() -> str:
        raise MCPError(code=-32000, message="ledger offline")

    from mcp import Client

    async with Client(server) as client:
        with pytest.raises(MCPError):
            await client.call_tool("ledger", {})
    span = mcpobs_telemetry.server_span("tools/call ledger")
    assert span.attributes[S.OUTCOME] == "server_error"
    assert span.attributes[S.ERROR_TYPE] == "-32000"
    assert span.attributes[S.RPC_RESPONSE_STATUS_CODE] == "-32000"
    assert span.status.status_code is StatusCode.ERROR


async def test_one_span_per_request_replacing_the_sdk_middleware(mcpobs_telemetry):
    from mcp.server._otel import OpenTelemetryMiddleware

    server = create_server()
    assert not any(isinstance(m, OpenTelemetryMiddleware) for m in server.middleware)
    from mcp import Client

    async with Client(server) as client:
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
    names = [s.name for s in mcpobs_telemetry.spans() if s.kind is SpanKind.SERVER]
    assert names.count("tools/call get_order_status") == 1
    assert {s.instrumentation_scope.name for s in mcpobs_telemetry.spans()} == {"mcpobs"}
    scope = mcpobs_telemetry.spans()[0].instrumentation_scope
    assert scope.schema_url == S.SCHEMA_URL and scope.version


async def test_a_lowlevel_handler_refusing_an_unlisted_name_with_32602_is_discovery_on_both_sides(mcpobs_telemetry):
    """The MCP organisation's reference servers (a lowlevel `Server`) answer a tool they do not have with
    -32602 "Unknown tool". The server's own listing lacks the name: the name is the caller's mistake
    (discovery), not its arguments, on the server as on the client (issue 52)."""
    import mcp_types as types
    from mcp import Client
    from mcp.server.lowlevel.server import Server

    tool = types.Tool(
        name="git_status", input_schema={"type": "object", "properties": {"repo_path": {"type": "string"}}}
    )

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx, params):
        if params.name != "git_status":
            raise MCPError(-32602, f"Unknown tool: {params.name}")
        return types.CallToolResult(content=[types.TextContent(type="text", text="clean")])

    server = Server("git", on_list_tools=list_tools, on_call_tool=call_tool)
    async with Client(server) as client:
        await client.list_tools()
        with pytest.raises(MCPError):
            await client.call_tool("git_push", {"repo_path": "."})
    spans = mcpobs_telemetry.spans_named("tools/call")
    assert sorted((s.kind.name, s.attributes[S.OUTCOME], s.attributes[S.FAILURE_BOUNDARY]) for s in spans) == [
        ("CLIENT", "client_error", "discovery"),
        ("SERVER", "client_error", "discovery"),
    ]
    (server_span,) = [s for s in spans if s.kind is SpanKind.SERVER]
    assert server_span.attributes[S.RPC_RESPONSE_STATUS_CODE] == "-32602"
