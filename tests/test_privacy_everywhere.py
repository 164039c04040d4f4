"""No secret in any exported byte: every path, on MCPServer and FastMCP, in memory, over HTTP and stdio.

Secret strings (`secret_shop.py`) go through exceptions (tool, resource, prompt), `ToolError`,
`MCPError`, resource URIs with userinfo, a token, a signature and a fragment, progress messages,
elicitation and sampling (both ways), the host's baggage, the client's URL (userinfo and query)
and its `Authorization` header. What both sides export (spans, events, metric labels, mcpobs's
log records) is encoded with the real OTLP encoders, or, over stdio, received as OTLP bytes from
the server process, and searched for every secret.

With default settings no secret appears (a progress message is recorded only with
`record_progress_messages=True`, through `redact`).
With the opt-ins and a `redact`, the opted-in text appears and no masked word does.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from opentelemetry import baggage
from opentelemetry import context as otel_context
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from otlp_receiver import OtlpReceiver
from secret_shop import (
    OPT_INS,
    PATHS,
    create_fastmcp,
    create_server,
    drive,
    elicitation_callback,
    masked,
    sampling_callback,
    token,
    visible,
)
from transports import serve_http

import mcpobs

pytestmark = [
    pytest.mark.anyio,
    # resources/subscribe is a path until the 2026-07-28 revision (legacy sessions still send it);
    # the SDK's own LoggingHandler is deprecated for a package the dev extra does not install.
    pytest.mark.filterwarnings("ignore:resources/subscribe is removed"),
    pytest.mark.filterwarnings("ignore:`LoggingHandler` in `opentelemetry-sdk` is deprecated"),
]

HERE = Path(__file__).parent

RECORDED_BY_DEFAULT: set[str] = set()
"""Paths whose text is recorded with default settings: none (docs/privacy.md)."""

OPTED_IN = {
    "mcpserver": {
        "tool_exception",
        "tool_error",
        "mcp_error",
        "resource_exception",
        "prompt_exception",
        "uri_userinfo",
        "uri_token",
        "uri_signature",
        "uri_fragment",
        "progress",
        "arguments",
    },
}
OPTED_IN["fastmcp"] = OPTED_IN["mcpserver"]
"""Paths whose VISIBLE word the opt-ins record (each also needs `redact` to mask its MASKED word)."""


class Exported:
    """Everything this process exports, as the OTLP bytes its exporters would send."""

    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.logs = InMemoryLogRecordExporter()
        self.logger_provider = LoggerProvider()
        self.logger_provider.add_log_record_processor(SimpleLogRecordProcessor(self.logs))
        self.handler = LoggingHandler(logger_provider=self.logger_provider)

    def encoded(self) -> bytes:
        spans = encode_spans(self.spans.get_finished_spans()).SerializeToString()
        data = self.reader.get_metrics_data()
        metrics = encode_metrics(data).SerializeToString() if data is not None else b""
        logs = encode_logs(self.logs.get_finished_logs()).SerializeToString()
        return spans + metrics + logs


@contextmanager
def instrumented(options: dict[str, Any]) -> Iterator[Exported]:
    exported = Exported()
    logger = logging.getLogger("mcpobs")
    level = logger.level
    logger.addHandler(exported.handler)
    logger.setLevel(logging.INFO)  # the session log lines
    mcpobs.uninstrument()
    mcpobs.instrument(tracer_provider=exported.tracer_provider, meter_provider=exported.meter_provider, **options)
    try:
        yield exported
    finally:
        mcpobs.uninstrument()
        logger.removeHandler(exported.handler)
        logger.setLevel(level)


class WireTap:
    """ASGI middleware keeping every request's headers and body: what reached the server."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[bytes] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.seen.append(b"".join(k + b": " + v for k, v in scope.get("headers", [])))
            self.seen.append(scope.get("query_string", b""))

            async def tapped() -> Any:
                message = await receive()
                self.seen.append(message.get("body", b""))
                return message

            return await self.app(scope, tapped, send)
        return await self.app(scope, receive, send)


@contextmanager
def host_baggage() -> Iterator[None]:
    attached = otel_context.attach(baggage.set_baggage("enduser.email", token("baggage")))
    try:
        yield
    finally:
        otel_context.detach(attached)


def _server(host: str) -> Any:
    return create_fastmcp() if host == "fastmcp" else create_server()


@asynccontextmanager
async def connected(host: str, transport: str, receiver: OtlpReceiver | None, opt_in: bool) -> AsyncIterator[Any]:
    callbacks = {"elicitation_callback": elicitation_callback, "sampling_callback": sampling_callback}
    async with AsyncExitStack() as stack:
        if transport == "memory":
            target: Any = _server(host)
        elif transport == "http":
            server = _server(host)
            tap = WireTap(server.http_app() if host == "fastmcp" else server.streamable_http_app())
            base = stack.enter_context(serve_http(tap))
            url = base.replace("://", f"://alice:{token('client_url_userinfo')}@") + (
                f"/mcp?api_key={token('client_url_query')}"
            )
            http = await stack.enter_async_context(
                httpx.AsyncClient(headers={"Authorization": f"Bearer {token('client_header')}"})
            )
            target = streamable_http_client(url, http_client=http)
            stack.callback(_no_baggage_on_the_wire, tap)
        else:
            assert receiver is not None
            env = {"MCPOBS_SECRET_HOST": host, **({"MCPOBS_SECRET_OPTIN": "1"} if opt_in else {})}
            import os

            target = StdioServerParameters(
                command=sys.executable,
                args=[str(HERE / "secret_stdio_server.py"), f"http://127.0.0.1:{receiver.port}"],
                env={**os.environ, **env},
            )
        if host == "fastmcp" and transport == "memory":  # FastMCP in process: its own client
            import fastmcp

            client = await stack.enter_async_context(fastmcp.Client(target))
        else:
            client = await stack.enter_async_context(Client(target, **callbacks))
        yield client


def _no_baggage_on_the_wire(tap: WireTap) -> None:
    wire = b"".join(tap.seen)
    assert b"mcp" in wire  # the tap saw the requests
    assert token("baggage").encode() not in wire, "the host's baggage was sent to the server"


def assert_private(exported: bytes, host: str, opt_in: bool) -> None:
    assert b"tools/call" in exported  # something was exported
    leaks = []
    for path in PATHS:
        shown = OPTED_IN[host] if opt_in else RECORDED_BY_DEFAULT
        if masked(path).encode() in exported and not (path in RECORDED_BY_DEFAULT and not opt_in):
            leaks.append(masked(path))
        if visible(path).encode() in exported and path not in shown:
            leaks.append(visible(path))
    assert not leaks, f"exported: {leaks}"
    for path in OPTED_IN[host] if opt_in else RECORDED_BY_DEFAULT:
        assert visible(path).encode() in exported, f"{visible(path)} was not recorded"


@pytest.mark.parametrize("opt_in", [False, True], ids=["defaults", "opt-ins"])
@pytest.mark.parametrize("transport", ["memory", "http", "stdio"])
@pytest.mark.parametrize("host", ["mcpserver", "fastmcp"])
async def test_no_secret_reaches_any_exported_byte(host, transport, opt_in):
    receiver = OtlpReceiver() if transport == "stdio" else None
    with instrumented(OPT_INS if opt_in else {}) as exported, _running(receiver):
        async with connected(host, transport, receiver, opt_in) as client:
            await client.list_tools()  # the client names spans by what it listed
            with host_baggage():
                await drive(client, fastmcp=host == "fastmcp")
        seen = exported.encoded()
        if receiver is not None:  # the server process flushed at exit
            await _eventually(lambda: any(b"SERVER" in b or b"tools/call" in b for b in receiver.bodies))
            seen += b"".join(receiver.bodies)
    assert_private(seen, host, opt_in)


@contextmanager
def _running(receiver: OtlpReceiver | None) -> Iterator[None]:
    if receiver is None:
        yield
        return
    with receiver.running():
        yield


async def _eventually(found: Any, timeout: float = 30.0) -> None:
    import anyio

    with anyio.fail_after(timeout):
        while not found():
            await anyio.sleep(0.05)
