"""Across the two SDK lines: the 2.3 `Client` (instrumented, this venv) calls an instrumented mcp 1.30 server
(FastMCP 1 or FastMCP 3, a subprocess in .venv-sdk1-1.30.0) over Streamable HTTP and stdio.

One trace per call (the client's span parents the server's through `_meta`), the same outcome
on both sides (the server's verdict is what tells the client a crash from an unknown tool),
and the 2.x client's `server/discover` probe, which 1.x does not know, recorded by the 1.x
server as a request it refused before the client fell back to `initialize`.

The 1.x venv is built by `scripts/sdk1-venv 1.30.0` (scripts/test runs it before this suite).
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from opentelemetry.trace import SpanKind
from transports import eventually

from mcpobs import semconv as S

pytestmark = [pytest.mark.anyio, pytest.mark.sdk1]

ROOT = Path(__file__).resolve().parent.parent
RELEASE = "1.30.0"
CALLS = [
    ("get_order_status", {"order_id": "O-1873"}),  # ok
    ("get_order_status", {"order_id": "O-9999"}),  # a deliberate tool error
    ("quote_refund", {"order_id": "O-1873", "amount_cents": -1}),  # a crash
    ("billing__create_invoice", {}),  # an unknown tool
    ("quote_refund", {"order_id": "O-1873", "amount_cents": "lots"}),  # bad arguments
]


def sdk1_python() -> Path:
    python = ROOT / f".venv-sdk1-{RELEASE}" / "bin" / "python"
    if not python.exists():
        pytest.fail(
            f"the mcp {RELEASE} venv is missing ({python.parent.parent.name}): build it with "
            f"`scripts/sdk1-venv {RELEASE}` (scripts/test does, before this suite)"
        )
    return python


def read_spans(spans_file: Path) -> list[dict[str, Any]]:
    if not spans_file.exists():
        return []
    found = []
    for line in spans_file.read_text().splitlines():
        try:
            found.append(json.loads(line))
        except ValueError:  # the last line, half written as we read: the next poll has it whole
            continue
    return found


@contextmanager
def served_by_1x(host: str, spans_file: Path) -> Iterator[str]:
    """The shop on `host`, instrumented, in the 1.x venv, over Streamable HTTP; yields its URL."""
    script = ROOT / "tests" / "sdk1" / "servers_http.py"
    process = subprocess.Popen(
        [str(sdk1_python()), str(script), host, str(spans_file)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    url: list[str] = []
    reader = threading.Thread(target=lambda: url.append(process.stdout.readline().strip()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(60)
    try:
        assert url and url[0].startswith("http://127.0.0.1:"), f"the 1.x server did not start ({process.poll()})"
        yield url[0]
    finally:
        process.stdin.close()  # type: ignore[union-attr]
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


def stdio_by_1x(host: str, spans_file: Path) -> StdioServerParameters:
    import os

    script = ROOT / "tests" / "sdk1" / "servers_stdio.py"
    return StdioServerParameters(
        command=str(sdk1_python()), args=[str(script), host, str(spans_file)], env=dict(os.environ)
    )


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("host", ["fastmcp1", "fastmcp3"])
async def test_a_2x_client_and_a_1x_server_make_one_trace_per_call_and_agree(
    mcpobs_telemetry, tmp_path, host, transport
):
    spans_file = tmp_path / "server-spans.jsonl"
    tracer = mcpobs_telemetry.tracer_provider.get_tracer("host")
    results = []

    async def day(client: Client) -> None:
        for tool, arguments in CALLS:
            results.append(await client.call_tool(tool, arguments))

    with tracer.start_as_current_span("answer customer") as host_span:
        if transport == "http":
            with served_by_1x(host, spans_file) as url:
                async with Client(url) as client:  # mode auto: server/discover first, then initialize
                    await day(client)
                served = await eventually(lambda: len(_calls(spans_file)) >= len(CALLS) and read_spans(spans_file))
        else:
            async with Client(stdio_by_1x(host, spans_file)) as client:
                await day(client)
                served = await eventually(lambda: len(_calls(spans_file)) >= len(CALLS) and read_spans(spans_file), 15)
    assert [r.is_error for r in results] == [False, True, True, True, True]

    trace_id = host_span.get_span_context().trace_id
    client_calls = sorted(
        (s for s in mcpobs_telemetry.spans() if s.kind is SpanKind.CLIENT and s.name.startswith("tools/call")),
        key=lambda s: s.start_time,
    )
    server_calls = [s for s in served if s["kind"] == "SERVER" and s["name"].startswith("tools/call")]
    assert len(client_calls) == len(server_calls) == len(CALLS)
    by_parent = {s["parent_id"]: s for s in server_calls}
    for client_span in client_calls:
        assert client_span.context.trace_id == trace_id
        server_span = by_parent[f"{client_span.context.span_id:016x}"]  # the client's span is its parent
        assert server_span["trace_id"] == f"{trace_id:032x}"
        assert server_span["name"] == client_span.name
        sides = [
            (client_span.attributes[S.OUTCOME], client_span.attributes.get(S.FAILURE_BOUNDARY)),
            (server_span["attributes"][S.OUTCOME], server_span["attributes"].get(S.FAILURE_BOUNDARY)),
        ]
        assert sides[0] == sides[1], (client_span.name, sides)
    outcomes = [c.attributes[S.OUTCOME] for c in client_calls]
    assert outcomes == ["ok", "tool_error", "server_error", "client_error", "client_error"]

    # The 2.x client's probe: a method 1.x does not serve, refused before any handler; then the handshake.
    (probe,) = [s for s in served if s["attributes"].get(S.MCP_METHOD_NAME) == "server/discover"]
    assert probe["name"] == "server/discover"
    assert probe["attributes"][S.OUTCOME] == "client_error"
    if transport == "http":  # refused by the transport (no session): "Bad Request: Missing session ID"
        assert probe["attributes"][S.HTTP_RESPONSE_STATUS_CODE] == 400
        assert probe["attributes"][S.FAILURE_BOUNDARY] == "transport"
    else:  # refused by the session's parse: a method it does not know
        assert probe["attributes"][S.RPC_RESPONSE_STATUS_CODE] == "-32602"
        assert probe["attributes"][S.FAILURE_BOUNDARY] == "capability"
        assert probe["attributes"][S.NETWORK_TRANSPORT] == "pipe"
    (init,) = [s for s in served if s["name"] == "initialize"]
    assert init["attributes"][S.MCP_PROTOCOL_VERSION] == "2025-11-25"
    assert mcpobs_telemetry.spans_named("server/discover", SpanKind.CLIENT)


def _calls(spans_file: Path) -> list[dict[str, Any]]:
    return [s for s in read_spans(spans_file) if s["kind"] == "SERVER" and s["name"].startswith("tools/call")]
