"""The server's edges: refusals over stdio, the initialize span's version, sessions that never were."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from itertools import islice

import httpx2
import pytest
from shop import create_server
from transports import HERE, RAW_HEADERS, read_spans, serve_http

from mcpobs import semconv as S

ENVELOPE_VERSION = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


def stdio_exchange(tmp_path, lines: list[str], replies: int) -> tuple[list[dict], list[dict]]:
    """Write raw lines to the instrumented shop over stdio; its replies and its spans.

    Stdin stays open until `replies` answers came: at end of input the SDK's serving loop stops,
    and a request still in flight then (on a loaded machine) is never answered.
    """
    spans_file = tmp_path / "spans.jsonl"
    process = subprocess.Popen(
        [sys.executable, str(HERE / "stdio_server.py"), str(spans_file)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write("\n".join(lines) + "\n")
        process.stdin.flush()
        answered: list[dict] = []
        reader = threading.Thread(
            target=lambda: answered.extend(json.loads(line) for line in islice(process.stdout, replies)),
            daemon=True,
        )
        reader.start()
        reader.join(60)
        process.stdin.close()
        process.wait(60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return answered, read_spans(spans_file)


def test_requests_refused_over_stdio_are_recorded_as_over_http(tmp_path):
    unsupported = {ENVELOPE_VERSION: "1999-01-01", CAPABILITIES: {}}
    no_capabilities = {ENVELOPE_VERSION: "2026-07-28"}
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": unsupported}}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": no_capabilities}}),
        "this line is not JSON-RPC",
    ]
    replies, spans = stdio_exchange(tmp_path, lines, replies=2)
    assert [r["error"]["code"] for r in replies] == [-32022, -32602]
    refused = [s for s in spans if s["kind"] == "SERVER"]
    assert [
        (s["name"], s["attributes"][S.FAILURE_BOUNDARY], s["attributes"].get(S.RPC_RESPONSE_STATUS_CODE))
        for s in refused
    ] == [
        ("tools/list", "version", "-32022"),
        ("tools/list", "transport", "-32602"),
        ("_OTHER", "transport", None),  # nothing answers a line that is not JSON-RPC
    ]
    for span in refused:
        assert span["attributes"][S.OUTCOME] == "client_error"
        assert span["attributes"][S.NETWORK_TRANSPORT] == "pipe"
        assert span["status"] == "UNSET"  # the caller's mistake


def test_the_initialize_span_carries_the_version_the_client_asked_for_and_got(mcpobs_telemetry):
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }
    with serve_http(create_server().streamable_http_app()) as base_url:
        assert httpx2.post(base_url + "/mcp", json=init, headers=RAW_HEADERS).status_code == 200
    (span,) = mcpobs_telemetry.spans_named("initialize")
    assert span.attributes[S.MCP_PROTOCOL_VERSION] == "2025-06-18"
    (point,) = [
        p
        for p in mcpobs_telemetry.points(S.SERVER_OPERATION_DURATION.name)
        if p.attributes[S.MCP_METHOD_NAME] == "initialize"
    ]
    assert point.attributes[S.MCP_PROTOCOL_VERSION] == "2025-06-18"


@pytest.mark.parametrize(
    ("headers", "body"),
    [
        (
            {**RAW_HEADERS, "mcp-protocol-version": "2025-11-25"},
            json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
        ),
        (RAW_HEADERS, "not json"),
    ],
    ids=["legacy-request-without-a-session", "parse-error"],
)
def test_a_request_refused_before_any_session_adds_no_session_duration(mcpobs_telemetry, headers, body):
    with serve_http(create_server().streamable_http_app()) as base_url:
        assert httpx2.post(base_url + "/mcp", content=body, headers=headers).status_code == 400
        time.sleep(0.3)
    assert mcpobs_telemetry.total(S.SERVER_SESSION_DURATION.name) == 0
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, {S.OUTCOME: "client_error"}) == 1  # still counted


@pytest.mark.anyio
async def test_an_mcp_error_a_tool_raises_stopped_in_the_handler(mcpobs_telemetry):
    from mcp import Client
    from mcp.server.mcpserver import MCPServer
    from mcp.shared.exceptions import MCPError
    from opentelemetry.trace import SpanKind

    server = MCPServer("strict")

    @server.tool()
    def strict() -> str:
        raise MCPError(code=-32600, message="this tool refuses that request")

    async with Client(server, mode="legacy") as client:
        with pytest.raises(MCPError):
            await client.call_tool("strict", {})
    (span,) = mcpobs_telemetry.spans_named("tools/call strict", SpanKind.SERVER)
    assert span.attributes[S.OUTCOME] == "client_error"
    assert span.attributes[S.FAILURE_BOUNDARY] == "handler"  # not `transport`: no transport refused it
    assert span.attributes[S.RPC_RESPONSE_STATUS_CODE] == "-32600"
