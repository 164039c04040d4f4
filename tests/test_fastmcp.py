"""FastMCP 4 servers and clients, as first-class as MCPServer (issue 20's ten defects, one test each or more).

Driven by `fastmcp.Client` and by `mcp.Client`, in memory, over Streamable HTTP on loopback
and over stdio in a subprocess. FastMCP's own spans go to the global tracer provider; the
`spans` fixture sends them to the same in-memory exporter as mcpobs's, so a test sees every
span a backend would.
"""

from __future__ import annotations

import logging
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import fastmcp
import httpx2
import pytest
from fastmcp.client.transports import StdioTransport
from fastmcp_shop import create_lowlevel
from fastmcp_shop import create_server as create_fastmcp
from opentelemetry import trace
from opentelemetry.instrumentation.utils import suppress_instrumentation
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind
from shop import create_server as create_mcpserver
from transports import RAW_HEADERS, eventually, read_spans, serve_http, stdio_params

import mcpobs
from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

MODES = ["native", "propagation_only", "off"]


class _Forward(SpanExporter):
    """The global provider's spans (FastMCP's own) go to the running test's exporter."""

    target: Any = None

    def export(self, spans: Any) -> SpanExportResult:
        if self.target is not None:
            self.target.export(spans)
        return SpanExportResult.SUCCESS


_forward = _Forward()
_installed = False


@pytest.fixture
def spans(mcpobs_telemetry):
    """`mcpobs_telemetry`, also holding the spans FastMCP itself emits (through the global provider)."""
    global _installed
    if not _installed:
        provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            trace.set_tracer_provider(TracerProvider())
            provider = trace.get_tracer_provider()
        provider.add_span_processor(SimpleSpanProcessor(_forward))  # type: ignore[attr-defined]
        _installed = True
    _forward.target = mcpobs_telemetry.exporter
    yield mcpobs_telemetry
    _forward.target = None


def _server(spans_: Any, name: str | None = None) -> list[Any]:
    found = [s for s in spans_.spans() if s.kind is SpanKind.SERVER]
    return [s for s in found if name is None or s.name == name or s.name.startswith(name + " ")]


def _client(spans_: Any, name: str) -> list[Any]:
    return [s for s in spans_.spans() if s.kind is SpanKind.CLIENT and (s.name == name or s.name.startswith(name))]


@asynccontextmanager
async def fastmcp_client(transport: str, server: Any, **kwargs: Any):
    """A `fastmcp.Client` for `server` in memory or over Streamable HTTP on loopback."""
    async with AsyncExitStack() as stack:
        if transport == "http":
            url = stack.enter_context(serve_http(server.http_app())) + "/mcp"
            client = fastmcp.Client(url, **kwargs)
        else:
            client = fastmcp.Client(server, **kwargs)
        await stack.enter_async_context(client)
        yield client


# -- 1. one SERVER span per request, one CLIENT span per call, whatever FastMCP's mode -------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_one_server_span_and_one_client_span_per_call_in_every_telemetry_mode(
    spans, monkeypatch, mode, transport
):
    monkeypatch.setattr(fastmcp.settings, "telemetry_mode", mode)
    async with fastmcp_client(transport, create_fastmcp()) as client:
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
        await client.get_prompt("refund_reply", {"customer": "Ada"})
    await eventually(lambda: _server(spans, "prompts/get"))
    for method in ("tools/call", "prompts/get"):
        servers = _server(spans, method)
        assert len(servers) == 1, [(s.name, s.instrumentation_scope.name) for s in servers]
        assert servers[0].instrumentation_scope.name == "mcpobs"
        clients = _client(spans, method)
        assert len(clients) == 1, [(s.name, s.instrumentation_scope.name) for s in clients]
        assert clients[0].instrumentation_scope.name == "mcpobs"
        # The server span continues the client's trace, under the client's span.
        assert servers[0].context.trace_id == clients[0].context.trace_id
        assert servers[0].parent.span_id == clients[0].context.span_id
    assert not [s for s in spans.spans() if s.instrumentation_scope.name == "fastmcp"]


async def test_uninstrumented_fastmcp_still_has_its_own_spans(spans, monkeypatch):
    """The coexistence policy only applies inside requests mcpobs records."""
    monkeypatch.setattr(fastmcp.settings, "telemetry_mode", "native")
    mcpobs.uninstrument()
    async with fastmcp_client("memory", create_fastmcp()) as client:
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
    assert [s.instrumentation_scope.name for s in _server(spans, "tools/call")] == ["fastmcp"]


# -- 2. names from the first call --------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_a_registered_tool_and_prompt_are_named_on_the_first_call(spans, transport):
    from mcp import Client

    server = create_fastmcp()
    if transport == "memory":
        async with fastmcp_client("memory", server) as client:
            await client.call_tool("get_order_status", {"order_id": "O-1873"})
            await client.get_prompt("refund_reply", {"customer": "Ada"})
    else:  # the SDK's client, which lists nothing first
        with serve_http(server.http_app()) as base:
            async with Client(base + "/mcp") as client:
                await client.call_tool("get_order_status", {"order_id": "O-1873"})
                await client.get_prompt("refund_reply", {"customer": "Ada"})
    (call,) = _server(spans, "tools/call")
    assert call.name == "tools/call get_order_status"
    assert call.attributes[S.GEN_AI_TOOL_NAME] == "get_order_status"
    (prompt,) = _server(spans, "prompts/get")
    assert prompt.name == "prompts/get refund_reply"
    assert spans.total(S.SERVER_REQUESTS.name, {S.GEN_AI_TOOL_NAME: "get_order_status"}) == 1


async def test_a_mounted_servers_tool_is_named_once_listed(spans):
    parent = fastmcp.FastMCP("gateway")
    parent.mount(create_fastmcp("inner"), namespace="shop")
    async with fastmcp_client("memory", parent) as client:
        names = [t.name for t in await client.list_tools()]
        assert "shop_get_order_status" in names
        await client.call_tool("shop_get_order_status", {"order_id": "O-1873"})
    (call,) = _server(spans, "tools/call")
    assert call.name == "tools/call shop_get_order_status"
    assert call.attributes[S.OUTCOME] == "ok"


# -- 3. outcomes: the same table as MCPServer ----------------------------------------------------------

MISTAKES = [
    ("ok", "get_order_status", {"order_id": "O-1873"}),
    ("tool error", "get_order_status", {"order_id": "O-0"}),
    ("crash", "quote_refund", {"order_id": "O-1", "amount_cents": -1}),
    ("unknown tool", "no_such_tool", {}),
    ("bad arguments", "quote_refund", {"order_id": "O-1"}),
]


async def _outcomes(spans_: Any, server: Any, transport: str) -> dict[str, tuple[Any, ...]]:
    from mcp import Client

    spans_.exporter.clear()
    table: dict[str, tuple[Any, ...]] = {}
    async with AsyncExitStack() as stack:
        if transport == "http":
            app = server.http_app() if hasattr(server, "http_app") else server.streamable_http_app()
            client = Client(stack.enter_context(serve_http(app)) + "/mcp")
        else:
            client = Client(server)
        await stack.enter_async_context(client)
        for label, tool, arguments in MISTAKES:
            spans_.exporter.clear()
            result = await client.call_tool(tool, arguments)
            (span,) = await eventually(lambda: _server(spans_, "tools/call"))
            a = span.attributes
            table[label] = (
                result.is_error,
                a.get(S.OUTCOME),
                a.get(S.FAILURE_BOUNDARY),
                a.get(S.ERROR_TYPE),
                span.status.status_code.name,
                [e.attributes.get("exception.type") for e in span.events if e.name == "exception"],
            )
    return table


@pytest.mark.parametrize("transport", ["http"])
async def test_fastmcp_tool_mistakes_have_the_mcpserver_outcomes(spans, transport):
    expected = await _outcomes(spans, create_mcpserver(), transport)
    assert expected["crash"][1:3] == ("server_error", "handler")  # the reference table, as the issue states it
    assert expected["unknown tool"][1:3] == ("client_error", "discovery")
    assert expected["bad arguments"][1:3] == ("client_error", "arguments")
    got = await _outcomes(spans, create_fastmcp(), transport)
    assert got == expected


async def test_a_crash_is_recorded_with_its_cause_in_memory(spans):
    async with fastmcp_client("memory", create_fastmcp()) as client:
        with pytest.raises(Exception, match="refund ledger corrupted"):
            await client.call_tool("quote_refund", {"order_id": "O-1", "amount_cents": -1})
    (span,) = _server(spans, "tools/call")
    assert span.attributes[S.OUTCOME] == "server_error"
    assert span.attributes[S.FAILURE_BOUNDARY] == "handler"
    (event,) = [e for e in span.events if e.name == "exception"]
    assert event.attributes["exception.type"] == "RuntimeError"
    assert span.status.description == "RuntimeError"  # the type; the message only with record_error_messages


# -- 4. progress ----------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_progress_reports_become_spans_and_counts(spans, transport):
    seen = []

    async def on_progress(progress, total, message):
        seen.append(progress)

    async with fastmcp_client(transport, create_fastmcp(), progress_handler=on_progress) as client:
        await client.call_tool("slow_export", {"rows": 3})
    (call,) = _server(spans, "tools/call")
    progress = [s for s in spans.spans() if s.name == S.PROGRESS_SPAN]
    assert [s.attributes[S.PROGRESS_VALUE] for s in progress] == [1.0, 2.0, 3.0]
    assert all(s.parent.span_id == call.context.span_id for s in progress)
    assert progress[0].attributes[S.PROGRESS_REQUESTED] is True
    assert spans.total(S.PROGRESS_REPORTS.name, {S.GEN_AI_TOOL_NAME: "slow_export"}) == 3
    assert seen == [1.0, 2.0, 3.0]


# -- 5. the session line ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_session_line_counts_what_the_server_offers(spans, caplog, mode):
    caplog.set_level(logging.INFO, logger="mcpobs.session")
    async with fastmcp_client("memory", create_fastmcp(), mode=mode):
        pass
    (line,) = [r.getMessage() for r in caplog.records if r.name == "mcpobs.session"]
    assert "tools=3 prompts=1 resources=1" in line, line
    assert "'tools'" in line and "'prompts'" in line and "'resources'" in line, line
    method = "server/discover" if mode == "auto" else "initialize"
    (span,) = _server(spans, method)
    assert span.attributes[S.SESSION_OFFERED["tools"]] == 3


# -- 6. the SDK's own schema listing -----------------------------------------------------------------


@pytest.mark.parametrize("framework", ["lowlevel", "fastmcp"])
async def test_the_sdks_own_schema_listing_is_not_a_client_request(spans, framework):
    from mcp import Client

    if framework == "lowlevel":
        server, app_of, tool, arguments = (
            create_lowlevel(schema_hook=False),
            "streamable_http_app",
            "echo",
            {"text": "x"},
        )
    else:
        server, app_of, tool, arguments = create_fastmcp(), "http_app", "get_order_status", {"order_id": "O-1873"}
    with serve_http(getattr(server, app_of)()) as base:
        async with Client(base + "/mcp") as client:  # 2026-07-28: the SDK validates Mcp-Param headers
            await client.list_tools()
            for _ in range(3):
                await client.call_tool(tool, arguments)
            await client.list_tools()
    await eventually(lambda: len(_server(spans, "tools/call")) == 3)
    assert len(_server(spans, "tools/list")) == 2
    assert spans.total(S.SERVER_REQUESTS.name, {S.MCP_METHOD_NAME: "tools/list"}) == 2
    assert [s.parent for s in _server(spans, "tools/list")] == [s.parent for s in _server(spans, "tools/list")]
    assert all(s.parent is not None for s in _server(spans, "tools/list")), "each listing is in its caller's trace"


# -- 7. fastmcp.Client knows its connection ------------------------------------------------------------


class _Headers:
    """ASGI middleware remembering the `traceparent` header of every POST."""

    seen: list[str | None] = []

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            self.seen.append(dict(scope["headers"]).get(b"traceparent", b"").decode() or None)
        await self.app(scope, receive, send)


async def test_fastmcp_client_over_http_has_labels_a_trace_header_and_a_session_duration(spans):
    from starlette.middleware import Middleware

    _Headers.seen = []
    server = create_fastmcp()
    with serve_http(server.http_app(middleware=[Middleware(_Headers)])) as base:
        async with fastmcp.Client(base + "/mcp") as client:
            await client.call_tool("get_order_status", {"order_id": "O-1873"})
    (call,) = _client(spans, "tools/call")
    a = call.attributes
    assert a[S.SERVER_ADDRESS] == "127.0.0.1"
    assert a[S.SERVER_PORT] == int(base.rsplit(":", 1)[1])
    assert a[S.NETWORK_TRANSPORT] == "tcp" and a[S.NETWORK_PROTOCOL_NAME] == "http"
    assert f"{call.context.trace_id:032x}" in " ".join(h or "" for h in _Headers.seen)
    assert all(_Headers.seen), "every request carries a traceparent header"
    assert spans.total(S.CLIENT_SESSION_DURATION.name, {S.NETWORK_TRANSPORT: "tcp"}) == 1


# -- 8. FastMCP's HTTP app has the transport boundary ---------------------------------------------------


async def test_fastmcp_http_app_records_what_its_transport_refuses(spans, caplog):
    caplog.set_level(logging.WARNING, logger="mcpobs")
    server = create_fastmcp()
    with serve_http(server.http_app()) as base:
        url = base + "/mcp"
        async with httpx2.AsyncClient() as http:
            legacy = {**RAW_HEADERS, "mcp-protocol-version": "2025-11-25"}
            bad_json = await http.post(url, content=b"{not json", headers=legacy)
            wrong_type = await http.post(url, content=b"{}", headers={**legacy, "content-type": "text/plain"})
            unknown = await http.post(
                url,
                json={"jsonrpc": "2.0", "id": 7, "method": "ping"},
                headers={**legacy, "mcp-session-id": "no-such-session"},
            )
            other_route = await http.get(base + "/nowhere")
    assert bad_json.status_code >= 400 and wrong_type.status_code >= 400 and unknown.status_code >= 400
    assert other_route.status_code == 404
    refused = await eventually(lambda: len(_server(spans)) >= 3 and _server(spans))
    assert len(refused) == 3, [(s.name, dict(s.attributes)) for s in refused]
    for span in refused:
        assert span.attributes[S.OUTCOME] == "client_error"
        assert span.attributes[S.FAILURE_BOUNDARY] == "transport"
    assert spans.total(S.SERVER_REQUESTS.name, {S.FAILURE_BOUNDARY: "transport"}) == 3
    assert not [r for r in caplog.records if "before mcpobs.instrument()" in r.getMessage()]


# -- 9. stdio says pipe ------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("framework", ["fastmcp", "lowlevel"])
@pytest.mark.parametrize("client_kind", ["fastmcp.Client", "mcp.Client"])
async def test_stdio_spans_and_counts_say_pipe(tmp_path, framework, client_kind, monkeypatch):
    from mcp import Client

    spans_file = tmp_path / "spans.jsonl"
    params = stdio_params(spans_file, env={"MCPOBS_TEST_SERVER": framework})
    tool, arguments = (
        ("get_order_status", {"order_id": "O-1873"}) if framework == "fastmcp" else ("echo", {"text": "x"})
    )
    if client_kind == "mcp.Client":
        async with Client(params) as client:
            await client.call_tool(tool, arguments)
    else:
        transport = StdioTransport(command=params.command, args=list(params.args), env=params.env)
        async with fastmcp.Client(transport) as client:
            await client.call_tool(tool, arguments)
    found = await eventually(lambda: [s for s in read_spans(spans_file) if s["name"].startswith("tools/call")])
    assert found, read_spans(spans_file)
    (span,) = [s for s in found if s["kind"] == "SERVER"]
    assert span["attributes"][S.NETWORK_TRANSPORT] == "pipe"


async def test_fastmcp_client_over_stdio_labels_its_spans_pipe(spans, tmp_path):
    params = stdio_params(tmp_path / "spans.jsonl", env={"MCPOBS_TEST_SERVER": "fastmcp"})
    transport = StdioTransport(command=params.command, args=list(params.args), env=params.env)
    async with fastmcp.Client(transport) as client:
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
    (call,) = _client(spans, "tools/call")
    assert call.attributes[S.NETWORK_TRANSPORT] == "pipe"
    assert spans.total(S.CLIENT_SESSION_DURATION.name, {S.NETWORK_TRANSPORT: "pipe"}) == 1


# -- 10. uninstrument() leaves FastMCP as it built itself ------------------------------------------------


async def test_uninstrument_leaves_fastmcp_without_the_sdks_span_middleware(spans, monkeypatch):
    from mcp.server._otel import OpenTelemetryMiddleware

    monkeypatch.setattr(fastmcp.settings, "telemetry_mode", "native")
    server = create_fastmcp()
    built_as = [type(m).__name__ for m in server._mcp_server.middleware]
    mcpobs.uninstrument()
    chain = server._mcp_server.middleware
    assert not [m for m in chain if isinstance(m, OpenTelemetryMiddleware)]
    assert not [m for m in chain if type(m).__module__.startswith("mcpobs")]
    assert [type(m).__name__ for m in chain] == [n for n in built_as if n != "ServerMiddleware"]
    spans.exporter.clear()
    async with fastmcp_client("memory", server) as client:
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
    assert len(_server(spans, "tools/call")) == 1  # FastMCP's own, and no second one from the SDK


# -- suppress_instrumentation ---------------------------------------------------------------------


@pytest.mark.parametrize("framework", ["mcpserver", "fastmcp"])
async def test_suppress_instrumentation_is_honoured_on_both_sides(spans, monkeypatch, framework):
    from mcp import Client

    monkeypatch.setattr(fastmcp.settings, "telemetry_mode", "off")
    server = create_fastmcp() if framework == "fastmcp" else create_mcpserver()
    lowlevel = server._mcp_server if framework == "fastmcp" else server
    async with Client(lowlevel) as client:
        with suppress_instrumentation():
            await client.call_tool("get_order_status", {"order_id": "O-1873"})
        assert not spans.spans_named("tools/call get_order_status")
        assert spans.total(S.SERVER_REQUESTS.name, {S.MCP_METHOD_NAME: "tools/call"}) == 0
        await client.call_tool("get_order_status", {"order_id": "O-1873"})  # and afterwards, as before
    assert len(spans.spans_named("tools/call get_order_status", SpanKind.SERVER)) == 1
    assert len(spans.spans_named("tools/call get_order_status", SpanKind.CLIENT)) == 1


async def test_suppress_instrumentation_is_honoured_by_a_fastmcp_client(spans):
    async with fastmcp_client("memory", create_fastmcp()) as client:
        spans.exporter.clear()  # the session's negotiation, before the suppressed block
        with suppress_instrumentation():
            await client.call_tool("get_order_status", {"order_id": "O-1873"})
            await client.list_tools()
    # mcpobs steps aside entirely (FastMCP's own spans, its business, are not touched either).
    assert not [s for s in spans.spans() if s.instrumentation_scope.name == "mcpobs"]
    assert spans.total(S.CLIENT_OPERATION_DURATION.name, {S.MCP_METHOD_NAME: "tools/call"}) == 0
    assert spans.total(S.SERVER_REQUESTS.name, {S.MCP_METHOD_NAME: "tools/call"}) == 0


# -- contract fingerprints ------------------------------------------------------------------------


async def test_a_fastmcp_tool_is_not_stale_against_its_own_listing(spans):
    """The server fingerprints FastMCP's tool object as the client fingerprints its listing."""
    async with fastmcp_client("memory", create_fastmcp()) as client:
        await client.list_tools()
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
        await client.call_tool("quote_refund", {"order_id": "O-1", "amount_cents": 3})
    calls = _server(spans, "tools/call")
    assert len(calls) == 2
    for span in calls:
        assert S.TOOL_SCHEMA_STALE not in span.attributes
        assert span.attributes[S.TOOL_SCHEMA_FINGERPRINT]


async def test_a_fastmcp_server_built_before_instrument_is_adopted_when_it_serves(spans):
    mcpobs.uninstrument()
    server = create_fastmcp()  # built with nothing instrumented
    mcpobs.instrument(tracer_provider=spans.tracer_provider, meter_provider=spans.meter_provider)
    async with fastmcp_client("memory", server) as client:
        await client.call_tool("quote_refund", {"order_id": "O-1", "amount_cents": -1}, raise_on_error=False)
    (call,) = _server(spans, "tools/call")
    assert call.name == "tools/call quote_refund"
    assert (call.attributes[S.OUTCOME], call.attributes[S.FAILURE_BOUNDARY]) == ("server_error", "handler")


async def test_a_mounted_servers_crash_is_a_server_error_with_its_cause(spans):
    parent = fastmcp.FastMCP("gateway")
    parent.mount(create_fastmcp("inner"), namespace="shop")
    async with fastmcp_client("memory", parent) as client:
        result = await client.call_tool(
            "shop_quote_refund", {"order_id": "O-1", "amount_cents": -1}, raise_on_error=False
        )
    assert result.is_error
    (call,) = _server(spans, "tools/call")
    assert (call.attributes[S.OUTCOME], call.attributes[S.FAILURE_BOUNDARY]) == ("server_error", "handler")
    (event,) = [e for e in call.events if e.name == "exception"]
    assert event.attributes["exception.type"] == "RuntimeError"
