"""An `MCPServer` prompt that raises: the server's span records the code its client received.

`MCPServer.get_prompt` turns whatever a prompt raises into a `ValueError`, and the SDK answers
that with its catch-all code, which depends on the revision, not the transport: -32603
("Internal server error") at 2026-07-28 (`modern_error_data`, the in-memory dispatcher), 0
with the exception's text at 2025-11-25 (`JSONRPCDispatcher`'s v1 compatibility), in memory as
over Streamable HTTP and stdio. Each test drives the real transport, reads the code off the
client's `MCPError`, and asks the server's `prompts/get` SERVER span (and its count) for the same.

Run as a script (`python test_prompt_failures.py SPANS_FILE`, its directory first on the path)
it is the stdio server.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from opentelemetry.trace import SpanKind, StatusCode
from transports import eventually, read_spans, serve_http

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

PROMPT = "refund_reply"
MODES = [("auto", -32603, "2026-07-28"), ("legacy", 0, "2025-11-25")]
"""Client mode -> the code the SDK answers a prompt's exception with, and the revision it speaks."""


def create_server() -> MCPServer:
    mcp = MCPServer("templates")

    @mcp.prompt()
    def refund_reply(customer: str) -> str:
        """A reply template that cannot be rendered."""
        raise RuntimeError("template store unreachable")

    return mcp


async def received_code(client: Client) -> int:
    with pytest.raises(MCPError) as raised:
        await client.get_prompt(PROMPT, {"customer": "Ada"})
    return raised.value.error.code


def assert_recorded(attributes: Any, code: int, version: str) -> None:
    assert attributes[S.MCP_PROTOCOL_VERSION] == version
    assert attributes[S.OUTCOME] == "server_error"
    assert attributes[S.FAILURE_BOUNDARY] == "handler"
    assert attributes[S.RPC_RESPONSE_STATUS_CODE] == str(code)  # what the client received
    assert attributes[S.ERROR_TYPE] == str(code)  # the code, not the SDK's wrapping ValueError


def assert_counted(telemetry: Any, code: int) -> None:
    failed = {S.MCP_METHOD_NAME: "prompts/get", S.OUTCOME: "server_error", S.ERROR_TYPE: str(code)}
    assert telemetry.total(S.SERVER_REQUESTS.name, failed) == 1


def served(telemetry: Any) -> Any:
    (span,) = [s for s in telemetry.spans_named(f"prompts/get {PROMPT}") if s.kind is SpanKind.SERVER]
    return span


@pytest.mark.parametrize(("mode", "code", "version"), MODES, ids=["2026-07-28", "2025-11-25"])
async def test_in_memory(mcpobs_telemetry, mode, code, version):
    async with Client(create_server(), mode=mode) as client:
        assert await received_code(client) == code
    span = served(mcpobs_telemetry)
    assert_recorded(span.attributes, code, version)
    assert span.status.status_code is StatusCode.ERROR
    assert span.events[0].attributes["exception.type"].endswith("ValueError")  # the SDK's wrapper, kept as the event
    assert_counted(mcpobs_telemetry, code)


@pytest.mark.parametrize(("mode", "code", "version"), MODES, ids=["2026-07-28", "2025-11-25"])
async def test_over_streamable_http(mcpobs_telemetry, mode, code, version):
    with serve_http(create_server().streamable_http_app()) as base_url:
        async with Client(base_url + "/mcp", mode=mode) as client:
            assert await received_code(client) == code
    assert_recorded(served(mcpobs_telemetry).attributes, code, version)
    assert_counted(mcpobs_telemetry, code)
    (asked,) = [
        s
        for s in mcpobs_telemetry.spans()
        if s.kind is SpanKind.CLIENT and s.attributes.get(S.MCP_METHOD_NAME) == "prompts/get"
    ]  # named `prompts/get` alone: this client never listed the prompts
    assert asked.attributes[S.RPC_RESPONSE_STATUS_CODE] == str(code)  # both sides say the same code


@pytest.mark.parametrize(("mode", "code", "version"), MODES, ids=["2026-07-28", "2025-11-25"])
async def test_over_stdio(tmp_path, mode, code, version):
    spans_file = tmp_path / "spans.jsonl"
    params = StdioServerParameters(
        command=sys.executable, args=[__file__, str(spans_file)], env={**os.environ, "PYTHONUNBUFFERED": "1"}
    )
    async with Client(params, mode=mode) as client:
        assert await received_code(client) == code

    def find() -> list[dict[str, Any]]:
        return [s for s in read_spans(spans_file) if s["kind"] == "SERVER" and s["name"] == f"prompts/get {PROMPT}"]

    (span,) = await eventually(find)
    assert_recorded(span["attributes"], code, version)
    assert span["status"] == "ERROR"


def _serve_stdio() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from stdio_server import JsonLinesExporter

    import mcpobs

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(sys.argv[1])))
    mcpobs.instrument(tracer_provider=provider)
    create_server().run("stdio")


if __name__ == "__main__":
    _serve_stdio()
