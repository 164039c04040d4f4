"""What peers nobody here wrote can do to the telemetry: their mistakes, their odd error codes,
their odd messages. Found against real foreign peers (tests/interop); pinned here in memory."""

from __future__ import annotations

import gc
import json

import httpx2 as httpx
import mcp_types as types
import pytest
from mcp import Client
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.trace import SpanKind, StatusCode
from shop import create_server
from transports import raw_session, serve_http

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

TOOL = types.Tool(name="lookup", input_schema={"type": "object"})


def lowlevel(call_tool) -> Server:
    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[TOOL])

    return Server("low", on_list_tools=list_tools, on_call_tool=call_tool)


async def test_an_unknown_tool_on_a_lowlevel_server_is_the_callers_mistake(mcpobs_telemetry):
    """A lowlevel handler that raises for a name it does not serve, as the SDK's examples do."""

    async def call_tool(ctx, params):
        if params.name != "lookup":
            raise ValueError(f"Unknown tool: {params.name}")
        raise RuntimeError("lookup broke")

    async with Client(lowlevel(call_tool)) as client:
        await client.list_tools()
        with pytest.raises(MCPError):
            await client.call_tool("lookpu", {})
        with pytest.raises(MCPError):
            await client.call_tool("lookup", {})
    unknown = mcpobs_telemetry.server_span("tools/call")
    assert unknown.attributes[S.OUTCOME] == "client_error"
    assert unknown.attributes[S.FAILURE_BOUNDARY] == "discovery"
    assert unknown.status.status_code is StatusCode.UNSET
    assert S.ERROR_TYPE not in unknown.attributes
    crashed = mcpobs_telemetry.server_span("tools/call lookup")  # a tool it serves still crashes
    assert (crashed.attributes[S.OUTCOME], crashed.attributes[S.FAILURE_BOUNDARY]) == ("server_error", "handler")
    counted = {S.MCP_METHOD_NAME: "tools/call", S.OUTCOME: "client_error", S.FAILURE_BOUNDARY: "discovery"}
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, counted) == 1


async def test_a_prompt_missing_a_required_argument_is_the_callers_mistake(mcpobs_telemetry):
    async with Client(create_server()) as client:
        with pytest.raises(MCPError):
            await client.get_prompt("refund_reply", {})
    span = mcpobs_telemetry.server_span("prompts/get refund_reply")
    assert (span.attributes[S.OUTCOME], span.attributes[S.FAILURE_BOUNDARY]) == ("client_error", "arguments")
    assert span.status.status_code is StatusCode.UNSET
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, {S.OUTCOME: "server_error"}) == 0


async def test_error_codes_a_peer_invents_are_bounded_in_labels(mcpobs_telemetry):
    """Fifty distinct codes from one server: the spec's codes keep their names, the rest are _OTHER."""

    async def call_tool(ctx, params):
        raise MCPError(code=int(params.arguments["code"]), message="nope")

    codes = [-31000 - i for i in range(50)]
    async with Client(lowlevel(call_tool)) as client:
        await client.list_tools()  # a client names the tools it listed
        for code in [*codes, -32603, -32602]:
            with pytest.raises(MCPError):
                await client.call_tool("lookup", {"code": code})
    for metric in (S.CLIENT_REQUESTS.name, S.CLIENT_OPERATION_DURATION.name, S.SERVER_REQUESTS.name):
        points = mcpobs_telemetry.points(metric)
        types_seen = {p.attributes.get(S.ERROR_TYPE) for p in points if p.attributes[S.MCP_METHOD_NAME] == "tools/call"}
        assert types_seen <= {S.OTHER, "-32603", "-32602", None}, (metric, types_seen)
        codes_seen = {p.attributes.get(S.RPC_RESPONSE_STATUS_CODE) for p in points}
        assert codes_seen <= {S.OTHER, "-32603", "-32602", None}, (metric, codes_seen)
    calls = mcpobs_telemetry.spans_named("tools/call lookup", SpanKind.CLIENT)
    assert len(calls) == 52
    first = calls[0]
    assert first.attributes[S.ERROR_TYPE] == S.OTHER
    assert first.attributes[S.RPC_RESPONSE_STATUS_CODE] == "-31000"  # the span keeps the code itself


class _Started(SpanProcessor):
    """Remembers every span started and ended, to find one that never ends."""

    def __init__(self) -> None:
        self.open: dict[int, str] = {}

    def on_start(self, span, parent_context=None):
        self.open[span.context.span_id] = span.name

    def on_end(self, span):
        self.open.pop(span.context.span_id, None)


async def test_a_listen_stream_never_entered_leaves_no_span_open(mcpobs_telemetry):
    started = _Started()
    mcpobs_telemetry.tracer_provider.add_span_processor(started)
    async with Client(create_server()) as client:
        stream = client.listen(tools_list_changed=True)
        del stream
        gc.collect()
        await client.list_tools()
    assert started.open == {}


def test_a_request_with_a_null_id_is_not_a_successful_request(mcpobs_telemetry):
    """JSON-RPC says a request's id is not null; the SDK takes such a message as a notification."""
    with serve_http(create_server().streamable_http_app()) as base, httpx.Client(timeout=10) as http:
        url = base + "/mcp"
        session = raw_session(http, url)
        reply = http.post(
            url, content=json.dumps({"jsonrpc": "2.0", "id": None, "method": "tools/list"}), headers=session
        )
        assert reply.status_code == 202  # nothing answered
    (span,) = mcpobs_telemetry.spans_named("tools/list", SpanKind.SERVER)
    assert span.attributes[S.OUTCOME] == "client_error"
    assert span.attributes[S.FAILURE_BOUNDARY] == "transport"
    assert span.status.status_code is StatusCode.UNSET
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, {S.MCP_METHOD_NAME: "tools/list", S.OUTCOME: "ok"}) == 0
    latency = {S.MCP_METHOD_NAME: "tools/list", S.OUTCOME: "ok"}
    assert mcpobs_telemetry.total(S.SERVER_OPERATION_DURATION.name, latency) == 0


def test_a_request_with_a_null_id_over_stdio_is_not_a_successful_request(tmp_path):
    import subprocess
    import sys
    import threading

    from transports import HERE, read_spans

    spans_file = tmp_path / "spans.jsonl"
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": None, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},  # answered only after the null-id one was handled
    ]
    # stdin stays open until both answers are out: a host that closes it at once may see the
    # server stop before it reads the last request (seen under load, a cold CI run on 2 cores).
    server = subprocess.Popen(
        [sys.executable, str(HERE / "stdio_server.py"), str(spans_file)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    watchdog = threading.Timer(60, server.kill)  # an answer that never comes fails the test, not the run
    watchdog.start()
    server.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
    server.stdin.flush()
    answered = [json.loads(server.stdout.readline())["id"] for _ in range(2)]
    server.stdin.close()
    server.wait(60)
    watchdog.cancel()
    assert answered + [json.loads(line)["id"] for line in server.stdout.read().splitlines()] == [1, 2]
    listings = [s for s in read_spans(spans_file) if s["name"] == "tools/list"]
    assert sorted((s["attributes"][S.OUTCOME], s["attributes"].get(S.FAILURE_BOUNDARY)) for s in listings) == [
        ("client_error", "transport"),
        ("ok", None),
    ]
