"""The MCP Inspector's command-line mode, a client nobody here wrote, drives an instrumented server.

Over Streamable HTTP the shop runs in this process (uvicorn on loopback), so its telemetry is
read in memory; over stdio the Inspector starts the shop itself (tests/interop/stdio_server.py),
which writes its spans and metric points to files. Each test asserts what a person would look
at: span names, kinds, outcomes, statuses, boundaries, the trace a caller asked for, and the
metric points.
"""

from __future__ import annotations

import json

import httpx2 as httpx
import pytest
from opentelemetry.trace import SpanKind, StatusCode
from peers import InspectorFailed, inspector, python_server
from shop import create_server
from transports import eventually, raw_session, read_spans, serve_http

from mcpobs import semconv as S

pytestmark = pytest.mark.interop

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
PARENT_ID = "b7ad6b7169203331"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
HEADER_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
HEADER_PARENT_ID = "00f067aa0ba902b7"
HEADER_TRACEPARENT = f"00-{HEADER_TRACE_ID}-{HEADER_PARENT_ID}-01"


@pytest.fixture
def shop_url(mcpobs_telemetry):
    with serve_http(create_server().streamable_http_app()) as base:
        yield base + "/mcp"


def outcome_of(span) -> tuple:
    a = span.attributes
    return (span.name, a[S.OUTCOME], a.get(S.FAILURE_BOUNDARY), a.get(S.ERROR_TYPE), span.status.status_code)


def counted(telemetry, **labels) -> float:
    return telemetry.total(S.SERVER_REQUESTS.name, labels)


def tool_call(name: str, *arguments: str) -> tuple[str, ...]:
    """The Inspector's command-line arguments for one tools/call."""
    return ("--method", "tools/call", "--tool-name", name, "--tool-arg", *arguments)


def test_tool_outcomes_over_http(mcpobs_telemetry, shop_url):
    ok = inspector([shop_url], *tool_call("get_order_status", "order_id=O-1873"))
    assert ok["isError"] is False
    failed = inspector([shop_url], *tool_call("get_order_status", "order_id=O-404"))
    assert failed["isError"] is True
    crashed = inspector([shop_url], *tool_call("quote_refund", "order_id=O-1", "amount_cents=-5"))
    assert crashed["isError"] is True
    refused = inspector([shop_url], *tool_call("quote_refund", "order_id=O-1", "amount_cents=lots"))
    assert refused["isError"] is True

    calls = [s for s in mcpobs_telemetry.spans() if s.name.startswith("tools/call")]
    assert all(s.kind is SpanKind.SERVER for s in calls)
    assert [outcome_of(s) for s in calls] == [
        ("tools/call get_order_status", "ok", None, None, StatusCode.UNSET),
        ("tools/call get_order_status", "tool_error", "handler", "tool_error", StatusCode.ERROR),
        ("tools/call quote_refund", "server_error", "handler", "tool_error", StatusCode.ERROR),
        ("tools/call quote_refund", "client_error", "arguments", None, StatusCode.UNSET),
    ]
    for span in calls:
        a = span.attributes
        assert a[S.MCP_PROTOCOL_VERSION] == "2025-11-25"  # the Inspector speaks the handshake era
        assert a[S.NETWORK_TRANSPORT] == "tcp" and a[S.NETWORK_PROTOCOL_NAME] == "http"
        assert a[S.CLIENT_NAME] == "inspector-cli"
        assert span.parent is None  # the Inspector sends no trace context of its own
    # each Inspector run is its own session: initialize, initialized, tools/list, the call
    assert len(mcpobs_telemetry.spans_named("initialize", SpanKind.SERVER)) == 4
    tool = {S.MCP_METHOD_NAME: "tools/call"}
    assert counted(mcpobs_telemetry, **tool, **{S.GEN_AI_TOOL_NAME: "get_order_status", S.OUTCOME: "ok"}) == 1
    assert counted(mcpobs_telemetry, **tool, **{S.OUTCOME: "tool_error", S.FAILURE_BOUNDARY: "handler"}) == 1
    assert counted(mcpobs_telemetry, **tool, **{S.OUTCOME: "server_error", S.ERROR_TYPE: "tool_error"}) == 1
    assert counted(mcpobs_telemetry, **tool, **{S.OUTCOME: "client_error", S.FAILURE_BOUNDARY: "arguments"}) == 1
    durations = mcpobs_telemetry.points(S.SERVER_OPERATION_DURATION.name)
    assert sum(p.count for p in durations if p.attributes[S.MCP_METHOD_NAME] == "tools/call") == 4


def test_a_prompt_missing_a_required_argument_is_the_callers_mistake(mcpobs_telemetry, shop_url):
    with pytest.raises(InspectorFailed, match="Missing required arguments"):
        inspector([shop_url], "--method", "prompts/get", "--prompt-name", "refund_reply")
    ok = inspector(
        [shop_url], "--method", "prompts/get", "--prompt-name", "refund_reply", "--prompt-args", "customer=Ada"
    )
    assert "Ada" in json.dumps(ok)
    missing, fine = mcpobs_telemetry.spans_named("prompts/get refund_reply", SpanKind.SERVER)
    assert outcome_of(missing) == ("prompts/get refund_reply", "client_error", "arguments", None, StatusCode.UNSET)
    assert not missing.events  # no exception recorded: nothing went wrong on the server
    assert outcome_of(fine)[1] == "ok"
    prompt = {S.MCP_METHOD_NAME: "prompts/get", S.GEN_AI_PROMPT_NAME: "refund_reply"}
    assert counted(mcpobs_telemetry, **prompt, **{S.OUTCOME: "client_error", S.FAILURE_BOUNDARY: "arguments"}) == 1
    assert counted(mcpobs_telemetry, **{S.OUTCOME: "server_error"}) == 0


def test_trace_context_in_meta_and_in_the_http_header(mcpobs_telemetry, shop_url):
    call = tool_call("get_order_status", "order_id=O-1873")
    inspector([shop_url], *call, "--metadata", f"traceparent={TRACEPARENT}")
    inspector([shop_url], *call, "--header", f"traceparent: {HEADER_TRACEPARENT}")
    # both: the message's own _meta wins over the HTTP exchange's header
    inspector(
        [shop_url], *call, "--metadata", f"traceparent={TRACEPARENT}", "--header", f"traceparent: {HEADER_TRACEPARENT}"
    )
    by_meta, by_header, by_both = mcpobs_telemetry.spans_named("tools/call get_order_status", SpanKind.SERVER)
    assert (f"{by_meta.context.trace_id:032x}", f"{by_meta.parent.span_id:016x}") == (TRACE_ID, PARENT_ID)
    assert by_meta.parent.is_remote
    assert (f"{by_header.context.trace_id:032x}", f"{by_header.parent.span_id:016x}") == (
        HEADER_TRACE_ID,
        HEADER_PARENT_ID,
    )
    assert by_header.parent.is_remote
    assert (f"{by_both.context.trace_id:032x}", f"{by_both.parent.span_id:016x}") == (TRACE_ID, PARENT_ID)
    # the header reaches every request of the session that carries it, the handshake too
    handshakes = mcpobs_telemetry.spans_named("initialize", SpanKind.SERVER)
    assert [f"{s.context.trace_id:032x}" for s in handshakes][1] == HEADER_TRACE_ID


@pytest.mark.anyio
async def test_an_unknown_tool_sent_raw_over_http_is_a_discovery_mistake(mcpobs_telemetry, shop_url):
    """The Inspector refuses an unknown tool before sending it, so this client is a raw POST."""
    with httpx.Client(timeout=10) as http:
        session = raw_session(http, shop_url)
        call = {"name": "refund_everything", "arguments": {}}
        reply = http.post(
            shop_url,
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
            headers={**session, "traceparent": HEADER_TRACEPARENT},
        )
        assert "refund_everything" in reply.text
        # "id": null is not a request: the SDK takes it as a notification and answers nothing
        reply = http.post(shop_url, json={"jsonrpc": "2.0", "id": None, "method": "tools/list"}, headers=session)
        assert reply.status_code == 202
    # the server answered 202 at once: its span for the null-id message ends a moment later
    await eventually(lambda: mcpobs_telemetry.spans_named("tools/list", SpanKind.SERVER))
    span = mcpobs_telemetry.server_span("tools/call")
    assert outcome_of(span) == ("tools/call", "client_error", "discovery", None, StatusCode.UNSET)
    assert span.attributes[S.GEN_AI_TOOL_NAME] == "refund_everything"
    assert f"{span.context.trace_id:032x}" == HEADER_TRACE_ID
    labels = {S.MCP_METHOD_NAME: "tools/call", S.GEN_AI_TOOL_NAME: S.OTHER, S.OUTCOME: "client_error"}
    assert counted(mcpobs_telemetry, **labels, **{S.FAILURE_BOUNDARY: "discovery"}) == 1
    # the null-id message is no successful tools/list
    (listing,) = mcpobs_telemetry.spans_named("tools/list", SpanKind.SERVER)
    assert listing.attributes[S.OUTCOME] == "client_error"
    assert counted(mcpobs_telemetry, **{S.MCP_METHOD_NAME: "tools/list", S.OUTCOME: "ok"}) == 0


def read_points(path) -> list[dict]:
    return json.loads(path.read_text()) if path.exists() else []


def test_outcomes_and_trace_context_over_stdio(tmp_path):
    spans_file, metrics_file = tmp_path / "spans.jsonl", tmp_path / "metrics.json"
    server = python_server(str(spans_file), str(metrics_file))
    ok = inspector(
        server,
        "--method",
        "tools/call",
        "--tool-name",
        "get_order_status",
        "--tool-arg",
        "order_id=O-1873",
        "--metadata",
        f"traceparent={TRACEPARENT}",
    )
    assert ok["isError"] is False
    # each run starts its own server process: two runs (the other outcomes are covered over HTTP)
    with pytest.raises(InspectorFailed):
        inspector(server, "--method", "prompts/get", "--prompt-name", "refund_reply")

    spans = [s for s in read_spans(spans_file) if s["kind"] == "SERVER"]
    assert all(s["attributes"][S.NETWORK_TRANSPORT] == "pipe" for s in spans)
    assert all(s["attributes"][S.MCP_PROTOCOL_VERSION] == "2025-11-25" for s in spans)
    calls = [s for s in spans if s["name"].startswith(("tools/call", "prompts/get"))]
    summary = [
        (s["name"], s["status"], s["attributes"][S.OUTCOME], s["attributes"].get(S.FAILURE_BOUNDARY)) for s in calls
    ]
    assert summary == [
        ("tools/call get_order_status", "UNSET", "ok", None),
        ("prompts/get refund_reply", "UNSET", "client_error", "arguments"),
    ]
    joined = calls[0]
    assert (joined["trace_id"], joined["parent_id"]) == (TRACE_ID, PARENT_ID)
    assert calls[1]["parent_id"] is None  # the Inspector sends no trace context unless told to
    # the points of the last run (each run is its own server process)
    points = read_points(metrics_file)
    requests = [p for p in points if p["name"] == S.SERVER_REQUESTS.name]
    assert {
        (p["attributes"][S.MCP_METHOD_NAME], p["attributes"][S.OUTCOME], p["attributes"].get(S.FAILURE_BOUNDARY))
        for p in requests
    } == {
        ("initialize", "ok", None),
        ("prompts/get", "client_error", "arguments"),
    }
    notifications = [p for p in points if p["name"] == S.SERVER_NOTIFICATIONS.name]  # not requests
    assert {p["attributes"][S.MCP_METHOD_NAME] for p in notifications} == {"notifications/initialized"}
    durations = [p for p in points if p["name"] == S.SERVER_OPERATION_DURATION.name]
    assert {p["attributes"][S.NETWORK_TRANSPORT] for p in durations} == {"pipe"}
    assert all(p["value"] == 1 for p in durations)
