"""instrument() and uninstrument(): idempotent, reversible, and harmless when telemetry breaks."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.server._otel import OpenTelemetryMiddleware
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.trace import SpanKind
from shop import create_server

import mcpobs
from mcpobs import semconv as S
from mcpobs._server.middleware import ServerMiddleware
from mcpobs._version import DISTRIBUTION
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio


def test_instrument_twice_changes_nothing(mcpobs_telemetry):
    mcpobs.instrument()
    server = create_server()
    kinds = [type(m).__name__ for m in server.middleware]
    assert kinds.count("ServerMiddleware") == 1
    assert "OpenTelemetryMiddleware" not in kinds


def test_uninstrument_gives_servers_back_the_sdk_middleware():
    capture()
    instrumented = create_server()
    assert isinstance(instrumented.middleware[0], ServerMiddleware)
    mcpobs.uninstrument()
    assert isinstance(instrumented.middleware[0], OpenTelemetryMiddleware)
    fresh = create_server()
    assert isinstance(fresh.middleware[0], OpenTelemetryMiddleware)
    assert not any(isinstance(m, ServerMiddleware) for m in fresh.middleware)


def test_bad_options_say_what_to_fix():
    with pytest.raises(mcpobs.ConfigurationError, match="max_progress_spans"):
        mcpobs.instrument(max_progress_spans=0)
    with pytest.raises(mcpobs.ConfigurationError, match="the options are"):
        mcpobs.instrument(max_attribute_lenght=10)
    assert not mcpobs.MCPInstrumentor().is_instrumented_by_opentelemetry


class _Exploding(SpanProcessor):
    def on_start(self, span, parent_context=None):
        raise RuntimeError("processor broke on start")

    def on_end(self, span):
        raise RuntimeError("processor broke on end")


async def test_a_broken_pipeline_never_changes_a_result(caplog):
    async def outcomes() -> list:
        async with Client(create_server()) as client:
            return [
                (await client.call_tool("get_order_status", {"order_id": "O-1873"})).structured_content,
                (await client.call_tool("get_order_status", {"order_id": "O-0"})).is_error,
                (await client.call_tool("nope", {})).is_error,
            ]

    expected = await outcomes()  # not instrumented
    telemetry = capture()
    telemetry.tracer_provider.add_span_processor(_Exploding())
    try:
        with caplog.at_level(logging.WARNING, logger="mcpobs"):
            assert await outcomes() == expected
    finally:
        mcpobs.uninstrument()
    assert any("telemetry failed" in r.getMessage() for r in caplog.records)


async def test_lowlevel_server_names_come_from_its_own_listing(mcpobs_telemetry):
    import mcp_types as types
    from mcp.server.lowlevel import Server

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[types.Tool(name="echo", input_schema={"type": "object"})])

    async def call_tool(ctx, params):
        return types.CallToolResult(content=[types.TextContent(type="text", text="hi")])

    server = Server("low", on_list_tools=list_tools, on_call_tool=call_tool)
    async with Client(server) as client:
        await client.call_tool("echo", {})  # before any listing: not yet known
        await client.list_tools()
        await client.call_tool("echo", {})
        await client.call_tool("made_up", {})
    server_spans = [s for s in mcpobs_telemetry.spans() if s.kind is SpanKind.SERVER]
    names = [s.name for s in server_spans if s.attributes[S.MCP_METHOD_NAME] == "tools/call"]
    assert names[-2:] == ["tools/call echo", "tools/call"]
    assert all(s.attributes[S.OUTCOME] == "ok" for s in server_spans)


def test_opentelemetry_instrument_loads_it_with_no_code(tmp_path: Path):
    script = tmp_path / "zero_code.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from shop import create_server\n"
        "print(type(create_server().middleware[0]).__name__)\n"
    )
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"}
    run = [str(bin_dir / "opentelemetry-instrument"), sys.executable, str(script)]
    loaded = subprocess.run(run, env=env, capture_output=True, text=True, timeout=120)
    assert loaded.stdout.strip().splitlines()[-1] == "ServerMiddleware", loaded.stderr
    env["OTEL_PYTHON_DISABLED_INSTRUMENTATIONS"] = DISTRIBUTION
    disabled = subprocess.run(run, env=env, capture_output=True, text=True, timeout=120)
    assert disabled.stdout.strip().splitlines()[-1] == "OpenTelemetryMiddleware", disabled.stderr


async def test_clients_false_instruments_servers_only():
    from opentelemetry.trace import SpanKind

    telemetry = capture(clients=False)
    try:
        async with Client(create_server()) as client:
            await client.call_tool("get_order_status", {"order_id": "O-1873"})
    finally:
        mcpobs.uninstrument()
    kinds = {s.kind for s in telemetry.spans()}
    assert kinds == {SpanKind.SERVER}
    assert telemetry.total(S.CLIENT_REQUESTS.name) == 0
    with pytest.raises(mcpobs.ConfigurationError, match="clients"):
        mcpobs.instrument(clients="no")
