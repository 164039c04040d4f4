"""Each row of the outcome table on mcp 1.x, on every host, in memory, over Streamable HTTP and over SSE.

The 1.x SDK answers an unknown tool, bad arguments, a deliberate tool error and a crash alike
with an `isError` result (and a prompt's or resource's exception with code 0): the spans must
still tell them apart, as on 2.x, with one SERVER span per request and the same names.
"""

from __future__ import annotations

import pytest
from mcp import types
from mcp.shared.exceptions import McpError
from opentelemetry.trace import SpanKind, StatusCode
from servers1 import CATALOG, HOSTS, create
from transports1 import IN_PROCESS, server_spans, session_over

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio


def one(telemetry, name: str):
    found = server_spans(telemetry, name)
    assert len(found) == 1, f"{name}: {[s.name for s in server_spans(telemetry)]}"
    return found[0]


def calls(telemetry, name: str, outcome: str) -> float:
    return telemetry.total(S.SERVER_REQUESTS.name, {S.MCP_METHOD_NAME: name, S.OUTCOME: outcome})


@pytest.mark.parametrize("transport", IN_PROCESS)
@pytest.mark.parametrize("host", HOSTS)
async def test_every_row_of_the_outcome_table(telemetry, host, transport):
    results = {}
    async with session_over(transport, create(host)) as session:
        await session.list_tools()
        await session.list_prompts()  # a lowlevel server's prompt names are learned from its listing, as on 2.x
        # Each call asks for the verdict, as an instrumented client does (the client here is not).
        ask = {"meta": {S.META_VERDICT_WANTED: S.VERDICT_VERSION}}
        results["ok"] = await session.call_tool("get_order_status", {"order_id": "O-1873"}, **ask)
        results["tool_error"] = await session.call_tool("get_order_status", {"order_id": "O-9999"}, **ask)
        results["crash"] = await session.call_tool("quote_refund", {"order_id": "O-1873", "amount_cents": -1}, **ask)
        results["unknown"] = await session.call_tool("billing__create_invoice", {}, **ask)
        results["arguments"] = await session.call_tool(
            "quote_refund", {"order_id": "O-1873", "amount_cents": "lots"}, **ask
        )
        await session.get_prompt("refund_reply", {"customer": "Ada"})
        with pytest.raises(McpError):
            await session.get_prompt("no_such_prompt", {})
        await session.read_resource(CATALOG)  # type: ignore[arg-type]
        await session.send_ping()
    assert not results["ok"].isError
    assert all(results[k].isError for k in ("tool_error", "crash", "unknown", "arguments"))

    ok, tool_error = sorted(server_spans(telemetry, "tools/call get_order_status"), key=lambda s: s.start_time)
    a = ok.attributes
    assert a[S.OUTCOME] == "ok" and S.FAILURE_BOUNDARY not in a and S.ERROR_TYPE not in a
    assert a[S.MCP_METHOD_NAME] == "tools/call" and a[S.GEN_AI_TOOL_NAME] == "get_order_status"
    assert a[S.GEN_AI_OPERATION_NAME] == "execute_tool"
    assert a[S.JSONRPC_REQUEST_ID]
    assert a[S.MCP_PROTOCOL_VERSION] == "2025-11-25"
    assert a[S.SERVER_NAME] == "shop"
    assert a[S.CLIENT_NAME] == "mcp"  # the 1.x ClientSession's default clientInfo
    assert ok.status.status_code is StatusCode.UNSET
    if transport == "memory":
        assert S.NETWORK_TRANSPORT not in a and S.MCP_SESSION_ID not in a
    else:
        assert a[S.NETWORK_TRANSPORT] == "tcp" and a[S.NETWORK_PROTOCOL_NAME] == "http"
        assert a[S.MCP_SESSION_ID]
        assert a[S.CLIENT_ADDRESS] == "127.0.0.1"

    assert tool_error.attributes[S.OUTCOME] == "tool_error"
    assert tool_error.attributes[S.FAILURE_BOUNDARY] == "handler"
    assert tool_error.attributes[S.ERROR_TYPE] == "tool_error"
    assert tool_error.status.status_code is StatusCode.ERROR

    crash, arguments = sorted(server_spans(telemetry, "tools/call quote_refund"), key=lambda s: s.start_time)
    assert crash.attributes[S.OUTCOME] == "server_error"
    assert crash.attributes[S.FAILURE_BOUNDARY] == "handler"
    assert crash.attributes[S.ERROR_TYPE] == "tool_error"  # an isError result on the wire, as the client records it
    assert crash.status.status_code is StatusCode.ERROR and crash.status.description == "RuntimeError"
    (event,) = [e for e in crash.events if e.name == "exception"]
    assert event.attributes["exception.type"].endswith("RuntimeError")
    assert "exception.message" not in event.attributes  # the tool's text: opt-in only
    assert str(event.attributes["exception.stacktrace"]).rstrip().endswith("\nRuntimeError")  # no message line
    assert "quote_refund" in event.attributes["exception.stacktrace"] or host == "lowlevel"  # where it was raised

    assert arguments.attributes[S.OUTCOME] == "client_error"
    assert arguments.attributes[S.FAILURE_BOUNDARY] == "arguments"
    assert arguments.status.status_code is StatusCode.UNSET

    unknown = one(telemetry, "tools/call")  # no caller-supplied name in the span name
    assert unknown.attributes[S.OUTCOME] == "client_error"
    assert unknown.attributes[S.FAILURE_BOUNDARY] == "discovery"
    assert unknown.attributes[S.GEN_AI_TOOL_NAME] == "billing__create_invoice"  # on the span, bounded
    assert unknown.status.status_code is StatusCode.UNSET
    labels = [p.attributes for p in telemetry.points(S.SERVER_REQUESTS.name)]
    assert {S.GEN_AI_TOOL_NAME: S.OTHER, S.OUTCOME: "client_error"}.items() <= next(
        lbl for lbl in labels if lbl.get(S.FAILURE_BOUNDARY) == "discovery"
    ).items()

    assert one(telemetry, "prompts/get refund_reply").attributes[S.OUTCOME] == "ok"
    missing = one(telemetry, "prompts/get")
    assert missing.attributes[S.OUTCOME] == "client_error"
    assert missing.attributes[S.FAILURE_BOUNDARY] == "discovery"
    read = one(telemetry, "resources/read")
    assert read.attributes[S.OUTCOME] == "ok" and read.attributes[S.MCP_RESOURCE_URI] == CATALOG
    assert one(telemetry, "ping").attributes[S.OUTCOME] == "ok"
    init = one(telemetry, "initialize")
    assert init.attributes[S.MCP_PROTOCOL_VERSION] == "2025-11-25"
    assert host == "lowlevel" or init.attributes[S.SESSION_OFFERED["tools"]] >= 7

    # One SERVER span per request, all mcpobs's (FastMCP 3 opens none of its own).
    assert {s.instrumentation_scope.name for s in telemetry.spans()} == {"mcpobs"}
    assert calls(telemetry, "tools/call", "ok") == 1
    assert calls(telemetry, "tools/call", "tool_error") == 1
    assert calls(telemetry, "tools/call", "server_error") == 1
    assert calls(telemetry, "tools/call", "client_error") == 2
    assert calls(telemetry, "initialize", "ok") == 1 and calls(telemetry, "tools/list", "ok") >= 1
    assert (
        telemetry.total(S.SERVER_OPERATION_DURATION.name, {S.GEN_AI_TOOL_NAME: "get_order_status", S.OUTCOME: "ok"})
        == 1
    )

    # The verdict: what the server decided travels back in the failed call's `_meta`, as asked.
    verdicts = {k: (results[k].meta or {}).get(S.META_VERDICT) for k in results}
    assert verdicts["ok"] is None
    assert verdicts["tool_error"] == {"outcome": "tool_error", "boundary": "handler", "errorType": "tool_error"}
    assert verdicts["crash"] == {"outcome": "server_error", "boundary": "handler", "errorType": "tool_error"}
    assert verdicts["unknown"] == {"outcome": "client_error", "boundary": "discovery"}
    assert verdicts["arguments"] == {"outcome": "client_error", "boundary": "arguments"}


@pytest.mark.parametrize("host", ["fastmcp1", "fastmcp3"])
async def test_a_protocol_error_raised_by_a_tool_keeps_its_side(telemetry, host):
    """1.x hands a tool's `McpError` back as an `isError` result: no JSON-RPC code went out, but its side did."""
    server = create(host)
    decorate = server.tool()

    def ledger() -> str:
        raise McpError(types.ErrorData(code=-32000, message="ledger offline"))

    def wrong() -> str:
        raise McpError(types.ErrorData(code=-32602, message="amount must be positive"))

    decorate(ledger)
    server.tool()(wrong)
    async with session_over("memory", server) as session:
        assert (await session.call_tool("ledger", {})).isError
        assert (await session.call_tool("wrong", {})).isError
    ledger_span = one(telemetry, "tools/call ledger")
    assert ledger_span.attributes[S.OUTCOME] == "server_error"
    assert ledger_span.attributes[S.FAILURE_BOUNDARY] == "handler"
    assert S.RPC_RESPONSE_STATUS_CODE not in ledger_span.attributes  # the wire had a result, not an error
    wrong_span = one(telemetry, "tools/call wrong")
    assert wrong_span.attributes[S.OUTCOME] == "client_error"
    assert wrong_span.attributes[S.FAILURE_BOUNDARY] == "handler"


async def test_a_resource_handler_that_raises_is_a_server_error_with_the_code_sent(telemetry):
    """Non-tool handlers keep their codes on 1.x: a `McpError` is answered with its own, a crash with 0."""
    server = create("lowlevel")

    async with session_over("memory", server) as session:
        with pytest.raises(McpError) as missing:
            await session.read_resource("shop://nowhere")  # type: ignore[arg-type]
    assert missing.value.error.code == -32002
    span = one(telemetry, "resources/read")
    assert span.attributes[S.OUTCOME] == "client_error"
    assert span.attributes[S.FAILURE_BOUNDARY] == "discovery"
    assert span.attributes[S.RPC_RESPONSE_STATUS_CODE] == "-32002"


async def test_a_prompt_that_crashes_is_a_server_error_with_code_0(telemetry):
    server = create("fastmcp1")

    @server.prompt()
    def broken() -> str:
        raise RuntimeError("template store down")

    async with session_over("memory", server) as session:
        with pytest.raises(McpError) as crashed:
            await session.get_prompt("broken", {})
    assert crashed.value.error.code == 0
    span = one(telemetry, "prompts/get broken")
    assert span.attributes[S.OUTCOME] == "server_error"
    assert span.attributes[S.FAILURE_BOUNDARY] == "handler"
    assert span.attributes[S.RPC_RESPONSE_STATUS_CODE] == "0"
    assert span.status.status_code is StatusCode.ERROR
    assert "template store down" not in str(span.status.description)


def test_the_hosts_are_told_apart(telemetry):
    """Each shop's lowlevel server is adopted by its own host: FastMCP 1's and 3's registries name their tools."""
    from mcpobs._hosts import owning_in
    from mcpobs._hosts.sdk1 import hosts as line1

    hosts, lowlevel_host = line1()
    for host in HOSTS:
        server = create(host)
        from servers1 import lowlevel

        found, owner = owning_in(hosts, lowlevel_host, lowlevel(server))
        expected = {"lowlevel": "lowlevel Server (mcp 1.x)", "fastmcp1": "FastMCP 1", "fastmcp3": "FastMCP 3"}[host]
        assert found.name == expected
        assert owner is server


async def test_server_spans_are_the_only_server_spans(telemetry):
    async with session_over("memory", create("lowlevel")) as session:
        await session.call_tool("get_order_status", {"order_id": "O-1873"})
    kinds = {s.kind for s in telemetry.spans()}
    assert kinds == {SpanKind.SERVER}


@pytest.mark.parametrize("host", HOSTS)
async def test_a_server_built_before_instrument_is_recorded_as_one_built_after(host):
    import mcpobs
    from mcpobs.testing import capture

    server = create(host)  # before instrument()
    telemetry = capture(clients=False)
    try:
        async with session_over("memory", server) as session:
            await session.call_tool("get_order_status", {"order_id": "O-9999"})
    finally:
        mcpobs.uninstrument()
    span = one(telemetry, "tools/call get_order_status")  # named: its host's registry is found
    assert span.attributes[S.OUTCOME] == "tool_error"


async def _raw_session(server, messages: list[dict]) -> list[dict]:
    """Send `messages` as they are to `server` in memory; the answers, by id."""
    import anyio
    from mcp.shared.memory import create_client_server_memory_streams
    from mcp.shared.message import SessionMessage

    answers: dict[object, dict] = {}
    streams = create_client_server_memory_streams()
    async with streams as ((client_read, client_write), (server_read, server_write)), anyio.create_task_group() as tg:
        tg.start_soon(lambda: server.run(server_read, server_write, server.create_initialization_options()))
        for message in messages:
            await client_write.send(SessionMessage(types.JSONRPCMessage.model_validate(message)))
            if "id" in message:
                with anyio.fail_after(5):
                    reply = (await client_read.receive()).message.model_dump(by_alias=True, exclude_none=True)
                answers[reply.get("id")] = reply
        tg.cancel_scope.cancel()
    return [answers[m["id"]] for m in messages if "id" in m]


async def test_requests_refused_before_any_handler_are_recorded(telemetry):
    """Before `initialize`, an unknown method, params that do not parse: the 1.x session answers -32602 itself."""
    from servers1 import lowlevel

    init = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }
    answers = await _raw_session(
        lowlevel(create("fastmcp1")),
        [
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},  # before initialize
            init,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 3, "method": "bogus/method-4711", "params": {}},
            {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"arguments": 5}},  # no name
        ],
    )
    assert [a.get("error", {}).get("code") for a in answers] == [-32602, None, -32602, -32602]
    early, unknown, malformed = sorted(
        (s for s in server_spans(telemetry) if s.attributes.get(S.RPC_RESPONSE_STATUS_CODE) == "-32602"),
        key=lambda s: s.start_time,
    )
    assert early.name == "tools/list" and early.attributes[S.FAILURE_BOUNDARY] == "handshake"
    assert unknown.name == S.OTHER and unknown.attributes[S.FAILURE_BOUNDARY] == "capability"
    assert malformed.name == "tools/call" and malformed.attributes[S.FAILURE_BOUNDARY] == "arguments"
    assert all(s.attributes[S.OUTCOME] == "client_error" for s in (early, unknown, malformed))
    assert telemetry.total(S.SERVER_REQUESTS.name, {S.OUTCOME: "client_error"}) == 3


@pytest.mark.parametrize("host", HOSTS)
async def test_contract_fingerprints_and_the_catalog(telemetry, host):
    """The schema a call was served against is the one the client listed; a client holding another is stale."""
    from mcpobs._core.contract import catalog_fingerprint, schema_fingerprint

    async with session_over("memory", create(host)) as session:
        listed = (await session.list_tools()).tools
        (tool,) = [t for t in listed if t.name == "get_order_status"]
        held = schema_fingerprint(tool.inputSchema, tool.outputSchema)
        await session.call_tool("get_order_status", {"order_id": "O-1873"}, meta={S.META_SCHEMA_FINGERPRINT: held})
        await session.call_tool("get_order_status", {"order_id": "O-2001"}, meta={S.META_SCHEMA_FINGERPRINT: "0" * 16})
    current, stale = sorted(server_spans(telemetry, "tools/call get_order_status"), key=lambda s: s.start_time)
    assert current.attributes[S.TOOL_SCHEMA_FINGERPRINT] == held
    assert S.TOOL_SCHEMA_STALE not in current.attributes and stale.attributes[S.TOOL_SCHEMA_STALE] is True
    assert current.attributes[S.TOOL_CONTRACT_FINGERPRINT]
    assert telemetry.total(S.STALE_CALLS.name, {S.GEN_AI_TOOL_NAME: "get_order_status"}) == 1
    listing = one(telemetry, "tools/list")
    wire = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listed]
    assert listing.attributes[S.CATALOG_FINGERPRINT] == catalog_fingerprint(wire)
    assert listing.attributes[S.CATALOG_TOOLS] == len(listed) == 7
