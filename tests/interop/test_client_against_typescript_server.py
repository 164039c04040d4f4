"""An instrumented `mcp.Client` against the TypeScript SDK's reference server (server-everything).

The server speaks revisions up to 2025-11-25, so every connection in `auto` mode first probes
`server/discover`, is refused, and falls back to `initialize`, as most of the ecosystem will
make it do for a while. Over stdio each test starts the server; over Streamable HTTP one node
process serves the whole module. Each test asserts the client's telemetry in full.
"""

from __future__ import annotations

import anyio
import mcp_types as types
import pytest
from mcp import Client
from opentelemetry.trace import SpanKind, StatusCode
from peers import everything_http, everything_stdio

from mcpobs import semconv as S

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

TRANSPORTS = ["stdio", "http"]
NETWORK = {"stdio": "pipe", "http": "tcp"}


@pytest.fixture(scope="module")
def http_url():
    with everything_http() as url:
        yield url


@pytest.fixture(params=TRANSPORTS)
def transport(request):
    return request.param


@pytest.fixture
def target(transport, request):
    return request.getfixturevalue("http_url") if transport == "http" else everything_stdio()


async def sampling(context, params):
    return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="42"), model="m")


async def elicitation(context, params):
    return types.ElicitResult(action="accept", content={"name": "Ada", "check": True, "email": "ada@example.com"})


async def roots(context):
    return types.ListRootsResult(roots=[types.Root(uri="file:///srv/shop", name="shop")])


def connect(target, **options):
    return Client(
        target, sampling_callback=sampling, elicitation_callback=elicitation, list_roots_callback=roots, **options
    )


def host_span(telemetry, name="host operation"):
    return telemetry.tracer_provider.get_tracer("host").start_as_current_span(name)


def client_spans(telemetry):
    return [s for s in telemetry.spans() if s.kind is SpanKind.CLIENT]


def requests_counted(telemetry, **labels) -> float:
    return telemetry.total(S.CLIENT_REQUESTS.name, labels)


def summary(span) -> tuple:
    a = span.attributes
    return (span.name, a[S.OUTCOME], a.get(S.ERROR_TYPE), span.status.status_code)


async def test_connecting_falls_back_to_initialize_without_an_error(mcpobs_telemetry, transport, target):
    with host_span(mcpobs_telemetry) as host:
        async with connect(target) as client:
            assert client.protocol_version == "2025-11-25"
    probe = mcpobs_telemetry.client_span("server/discover")
    handshake = mcpobs_telemetry.client_span("initialize")
    # the refusal is what a server of an older revision says: the probe did its job
    assert probe.status.status_code is StatusCode.UNSET
    assert S.ERROR_TYPE not in probe.attributes
    assert probe.attributes[S.OUTCOME] == "ok"
    assert probe.attributes[S.SESSION_FALLBACK] is True
    assert handshake.status.status_code is StatusCode.UNSET
    assert handshake.attributes[S.SESSION_FALLBACK] is True
    assert handshake.attributes[S.SESSION_NEGOTIATED_VERSION] == "2025-11-25"
    for span in (probe, handshake):
        assert span.parent.span_id == host.get_span_context().span_id
        assert span.attributes[S.NETWORK_TRANSPORT] == NETWORK[transport]
        assert S.FAILURE_BOUNDARY not in span.attributes  # nothing failed
    # over HTTP the refusal was a 400 (the SDK reads it as a JSON-RPC error): the status is kept, as an int
    assert probe.attributes.get(S.HTTP_RESPONSE_STATUS_CODE) == (400 if transport == "http" else None)
    assert S.HTTP_RESPONSE_STATUS_CODE not in handshake.attributes
    assert not [s for s in mcpobs_telemetry.spans() if s.status.status_code is StatusCode.ERROR]
    # in no metric is a connection a failed request
    for point in mcpobs_telemetry.points(S.CLIENT_REQUESTS.name) + mcpobs_telemetry.points(
        S.CLIENT_OPERATION_DURATION.name
    ):
        assert point.attributes[S.OUTCOME] == "ok", point.attributes
        assert S.ERROR_TYPE not in point.attributes
    assert requests_counted(mcpobs_telemetry, **{S.MCP_METHOD_NAME: "server/discover"}) == 1
    assert requests_counted(mcpobs_telemetry, **{S.MCP_METHOD_NAME: "initialize"}) == 1


async def test_tool_outcomes_as_the_client_sees_them(mcpobs_telemetry, transport, target):
    async with connect(target) as client:
        await client.list_tools()
        mcpobs_telemetry.clear()
        with host_span(mcpobs_telemetry) as host:
            assert not (await client.call_tool("echo", {"message": "hi"})).is_error
            # server-everything answers an unknown tool and bad arguments with isError results and
            # sends no verdict: the client's own listing proves both were the caller's mistake
            assert (await client.call_tool("refund_everything", {})).is_error
            assert (await client.call_tool("echo", {"message": 5})).is_error
            assert not (await client.call_tool("get-sum", {"a": 2, "b": 3})).is_error
    calls = [s for s in client_spans(mcpobs_telemetry) if s.attributes[S.MCP_METHOD_NAME] == "tools/call"]
    assert [summary(s) for s in calls] == [
        ("tools/call echo", "ok", None, StatusCode.UNSET),
        ("tools/call", "client_error", "tool_error", StatusCode.ERROR),
        ("tools/call echo", "client_error", "tool_error", StatusCode.ERROR),
        ("tools/call get-sum", "ok", None, StatusCode.UNSET),
    ]
    unknown = calls[1]
    assert unknown.attributes[S.GEN_AI_TOOL_NAME] == "refund_everything"  # on the span, never in a label
    # a name it never listed, arguments its listed schema refuses: decided by the listing
    assert [s.attributes.get(S.FAILURE_BOUNDARY) for s in calls] == [None, "discovery", "arguments", None]
    assert [s.attributes.get(S.OUTCOME_SOURCE) for s in calls] == [None, "listing", "listing", None]
    for span in calls:
        assert span.parent.span_id == host.get_span_context().span_id
        assert span.attributes[S.MCP_PROTOCOL_VERSION] == "2025-11-25"
        assert span.attributes[S.NETWORK_TRANSPORT] == NETWORK[transport]
    tool = {S.MCP_METHOD_NAME: "tools/call"}
    assert requests_counted(mcpobs_telemetry, **tool, **{S.GEN_AI_TOOL_NAME: "echo", S.OUTCOME: "ok"}) == 1
    assert requests_counted(mcpobs_telemetry, **tool, **{S.GEN_AI_TOOL_NAME: "echo", S.OUTCOME: "client_error"}) == 1
    assert requests_counted(mcpobs_telemetry, **tool, **{S.GEN_AI_TOOL_NAME: S.OTHER, S.OUTCOME: "client_error"}) == 1
    labels = {p.attributes.get(S.GEN_AI_TOOL_NAME) for p in mcpobs_telemetry.points(S.CLIENT_REQUESTS.name)}
    assert "refund_everything" not in labels
    durations = mcpobs_telemetry.points(S.CLIENT_OPERATION_DURATION.name)
    assert sum(p.count for p in durations if p.attributes[S.MCP_METHOD_NAME] == "tools/call") == 4


async def test_progress_cancel_and_timeout(mcpobs_telemetry, transport, target):
    reports: list[float] = []

    async def progress(value, total, message):
        reports.append(value)

    async with connect(target) as client:
        mcpobs_telemetry.clear()
        result = await client.call_tool(
            "trigger-long-running-operation", {"duration": 0.2, "steps": 2}, progress_callback=progress
        )
        assert not result.is_error and reports == [1, 2]
        with anyio.move_on_after(0.3):
            await client.call_tool("trigger-long-running-operation", {"duration": 5, "steps": 5})
        with pytest.raises(Exception):  # noqa: B017  (the SDK's timeout error)
            await client.call_tool(
                "trigger-long-running-operation", {"duration": 5, "steps": 5}, read_timeout_seconds=0.3
            )
    done, cancelled, timed_out = mcpobs_telemetry.spans_named(
        "tools/call trigger-long-running-operation", SpanKind.CLIENT
    )
    assert summary(done) == ("tools/call trigger-long-running-operation", "ok", None, StatusCode.UNSET)
    assert summary(cancelled) == ("tools/call trigger-long-running-operation", "cancelled", None, StatusCode.UNSET)
    # the caller giving up is the only `cancelled`; a deadline passing unanswered is a failure
    assert timed_out.attributes[S.OUTCOME] == "server_error"
    assert timed_out.attributes[S.ERROR_TYPE] == S.TIMEOUT
    assert timed_out.status.status_code is StatusCode.ERROR
    tool = {S.MCP_METHOD_NAME: "tools/call", S.GEN_AI_TOOL_NAME: "trigger-long-running-operation"}
    assert requests_counted(mcpobs_telemetry, **tool, **{S.OUTCOME: "cancelled"}) == 1
    assert requests_counted(mcpobs_telemetry, **tool, **{S.OUTCOME: "server_error", S.ERROR_TYPE: S.TIMEOUT}) == 1
    # only the call that completed is a latency sample
    assert mcpobs_telemetry.total(S.CLIENT_OPERATION_DURATION.name, tool) == 1


async def ask_the_client(telemetry, target):
    """Tools of server-everything that send the client sampling, elicitation and roots requests."""
    async with connect(target) as client:
        with host_span(telemetry):
            assert not (await client.call_tool("trigger-sampling-request", {"prompt": "why"})).is_error
            assert not (await client.call_tool("trigger-elicitation-request", {})).is_error
            assert not (await client.call_tool("get-roots-list", {})).is_error
    answers = [s for s in telemetry.spans() if s.kind is SpanKind.SERVER]
    assert {s.name for s in answers} >= {"sampling/createMessage", "elicitation/create", "roots/list"}
    return answers


async def test_the_servers_requests_carry_version_transport_and_a_metric(mcpobs_telemetry, transport, target):
    """The client is the server of these requests: its SERVER spans say as much as any other."""
    for span in await ask_the_client(mcpobs_telemetry, target):
        a = span.attributes
        assert (a[S.OUTCOME], span.status.status_code) == ("ok", StatusCode.UNSET)
        assert a[S.MCP_PROTOCOL_VERSION] == "2025-11-25"
        assert a[S.NETWORK_TRANSPORT] == NETWORK[transport]
    for method in ("sampling/createMessage", "elicitation/create", "roots/list"):
        labels = {
            S.MCP_METHOD_NAME: method,
            S.MCP_PROTOCOL_VERSION: "2025-11-25",
            S.NETWORK_TRANSPORT: NETWORK[transport],
            S.OUTCOME: "ok",
        }
        assert mcpobs_telemetry.total(S.SERVER_OPERATION_DURATION.name, labels) >= 1, method


async def test_a_request_the_server_sends_on_its_own_is_not_parented_to_a_finished_span(
    mcpobs_telemetry, transport, target
):
    """roots/list after the handshake arrives on the standalone stream (HTTP) or the pipe (stdio)."""
    answers = await ask_the_client(mcpobs_telemetry, target)
    handshake = mcpobs_telemetry.client_span("initialize")
    by_id = {s.context.span_id: s for s in mcpobs_telemetry.spans()}
    for span in answers:
        parent = by_id.get(span.parent.span_id) if span.parent else None
        if parent is not None:
            # asked on the response stream of a call of ours still in flight: its child
            assert parent.kind is SpanKind.CLIENT and parent.name.startswith("tools/call"), parent.name
            assert parent.end_time >= span.end_time
        else:
            # nothing says why the server asked: a trace of its own, linked to the session's handshake
            assert span.parent is None
            assert [link.context.span_id for link in span.links] == [handshake.context.span_id]
    if transport == "http":  # the exchange tells which call a request belongs to
        sampled = next(s for s in answers if s.name == "sampling/createMessage")
        assert by_id[sampled.parent.span_id].name == "tools/call trigger-sampling-request"
        unasked = [s for s in answers if s.name == "roots/list" and s.parent is None]
        assert unasked, "roots/list on the standalone stream"


async def test_prompts_and_resources(mcpobs_telemetry, transport, target):
    from mcp.shared.exceptions import MCPError

    async with connect(target) as client:
        mcpobs_telemetry.clear()
        await client.list_prompts()
        await client.get_prompt("simple-prompt")
        with pytest.raises(MCPError):
            await client.get_prompt("no-such-prompt")
        resources = await client.list_resources()
        await client.read_resource(resources.resources[0].uri)
        with pytest.raises(MCPError):
            await client.read_resource("demo://nothing/here")
    spans = {(s.name, s.attributes[S.OUTCOME], s.attributes.get(S.ERROR_TYPE)) for s in client_spans(mcpobs_telemetry)}
    assert spans == {
        ("prompts/list", "ok", None),
        ("prompts/get simple-prompt", "ok", None),
        ("prompts/get", "client_error", "-32602"),  # not listed: `_OTHER`, the name stays on the span
        ("resources/list", "ok", None),
        ("resources/read", "ok", None),
        ("resources/read", "client_error", "-32602"),
    }
    unknown = mcpobs_telemetry.client_span("prompts/get")
    assert unknown.attributes[S.GEN_AI_PROMPT_NAME] == "no-such-prompt"
    assert unknown.status.status_code is StatusCode.ERROR  # on the client every failed request is an error
    assert unknown.attributes[S.RPC_RESPONSE_STATUS_CODE] == "-32602"
    # -32602 alone cannot say the prompt was unknown; the client listed the prompts and this is not one
    assert unknown.attributes[S.FAILURE_BOUNDARY] == "discovery"
    assert unknown.attributes[S.OUTCOME_SOURCE] == "listing"
    failed = {S.MCP_METHOD_NAME: "resources/read", S.OUTCOME: "client_error", S.FAILURE_BOUNDARY: "arguments"}
    assert requests_counted(mcpobs_telemetry, **failed) == 1
    assert requests_counted(mcpobs_telemetry, **{S.MCP_METHOD_NAME: "resources/read", S.OUTCOME: "client_error"}) == 1


async def test_a_path_the_server_does_not_serve_is_a_404_at_the_transport(mcpobs_telemetry, http_url):
    """server-everything's HTTP server answers an unknown path with 404: the client says so."""
    with pytest.raises(BaseException):  # noqa: B017  (the SDK raises from its task group)
        async with connect(http_url.replace("/mcp", "/not-mcp"), mode="legacy"):
            pass
    handshake = mcpobs_telemetry.client_span("initialize")
    assert summary(handshake) == ("initialize", "client_error", "404", StatusCode.ERROR)
    assert handshake.attributes[S.FAILURE_BOUNDARY] == "transport"
    assert handshake.attributes[S.HTTP_RESPONSE_STATUS_CODE] == 404
    assert S.RPC_RESPONSE_STATUS_CODE not in handshake.attributes  # not the -32601 the SDK stood in
    failed = {S.MCP_METHOD_NAME: "initialize", S.OUTCOME: "client_error", S.FAILURE_BOUNDARY: "transport"}
    assert requests_counted(mcpobs_telemetry, **failed, **{S.ERROR_TYPE: "404"}) == 1


async def test_a_dead_server_is_an_outage_not_a_cancellation(mcpobs_telemetry):
    """server-everything over HTTP, stopped: the next connection finds nothing listening."""
    with everything_http() as url:
        pass
    with pytest.raises(BaseException):  # noqa: B017
        async with connect(url):
            pass
    probe = mcpobs_telemetry.client_span("server/discover")
    assert summary(probe) == ("server/discover", "server_error", "ConnectError", StatusCode.ERROR)
    assert probe.attributes[S.FAILURE_BOUNDARY] == "transport"
    assert requests_counted(mcpobs_telemetry, **{S.OUTCOME: "cancelled"}) == 0
