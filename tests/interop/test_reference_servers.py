"""The MCP organisation's Python reference servers, unmodified under `opentelemetry-instrument` (issue 52, test (e)).

mcp-server-git, mcp-server-time and mcp-server-fetch (the dev extra installs them, on mcp 2.3) each
run over stdio exactly as their users start them, with `opentelemetry-instrument` in front and the
`OTEL_*` environment pointing at an OTLP receiver on loopback; an instrumented `mcp.Client` in this
process drives them. Every call must be one trace (the server's span the child of the client's), both
sides must say the same outcome and boundary, and a tool the server does not have must be `discovery`
on both: the reference servers answer it with -32602 "Unknown tool".
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.trace import SpanKind
from otlp_receiver import OtlpReceiver

from mcpobs import semconv as S
from mcpobs.testing import capture

pytestmark = [pytest.mark.anyio, pytest.mark.interop]
BIN = Path(sys.executable).parent
OK, TOOL_ERROR, UNKNOWN = ("ok", None), ("tool_error", "handler"), ("client_error", "discovery")


def _bin(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing: the dev extra installs it (pip install -e '.[dev]')")
    return str(path)


@pytest.fixture
def repository(tmp_path: Path) -> str:
    """A git checkout with one commit, for mcp-server-git."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(repo)]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "README").write_text("hello\n")
    subprocess.run([*git, "add", "README"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], check=True)
    return str(repo)


@pytest.fixture
def page(tmp_path: Path) -> Iterator[str]:
    """A page served on loopback, for mcp-server-fetch."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<html><body><h1>Orders</h1><p>O-1873 delivered.</p></body></html>")
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def _server(receiver: OtlpReceiver, service: str, command: list[str]) -> StdioServerParameters:
    """The reference server as its users start it, under `opentelemetry-instrument`."""
    env = {
        "PATH": str(BIN) + ":/usr/bin:/bin",
        "HOME": str(Path.home()),
        "OTEL_SERVICE_NAME": service,
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": receiver.traces_url,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }
    if os.environ.get("PYTHONPATH"):  # the mcpobs under test, where the test process has it
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return StdioServerParameters(
        command=_bin("opentelemetry-instrument"), args=[_bin(command[0]), *command[1:]], env=env
    )


def _received(receiver: OtlpReceiver) -> list[dict[str, Any]]:
    """Every span the servers exported: trace and span ids as hex, kind, name, attributes."""
    spans = []
    for body in list(receiver.bodies):
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    spans.append(
                        {
                            "trace": span.trace_id.hex(),
                            "parent": span.parent_span_id.hex(),
                            "kind": span.kind,
                            "name": span.name,
                            "attributes": {
                                kv.key: getattr(kv.value, kv.value.WhichOneof("value")) for kv in span.attributes
                            },
                        }
                    )
    return spans


async def _drive(
    receiver: OtlpReceiver, service: str, command: list[str], calls: list[tuple[str, dict[str, Any], tuple[Any, Any]]]
) -> None:
    telemetry = capture()
    try:
        async with Client(_server(receiver, service, command)) as client:
            await client.list_tools()
            for name, arguments, _ in calls:
                with contextlib.suppress(Exception):  # the unknown tool: a JSON-RPC error, as without mcpobs
                    await client.call_tool(name, arguments)
        client_spans = sorted(
            (s for s in telemetry.spans() if s.kind is SpanKind.CLIENT and s.name.startswith("tools/call")),
            key=lambda s: s.start_time,
        )
    finally:
        import mcpobs

        mcpobs.uninstrument()
    assert len(client_spans) == len(calls)
    deadline = time.monotonic() + 20
    while True:
        served = [s for s in _received(receiver) if s["kind"] == 2 and s["name"].startswith("tools/call")]
        if (
            len([s for s in served if s["attributes"].get("service.name", service)]) >= len(calls)
            or time.monotonic() > deadline
        ):
            break
        time.sleep(0.1)
    traces = set()
    for span, (name, _, expected) in zip(client_spans, calls, strict=True):
        trace_id, span_id = f"{span.context.trace_id:032x}", f"{span.context.span_id:016x}"
        traces.add(trace_id)
        mine = [s for s in served if s["trace"] == trace_id]
        assert len(mine) == 1, (service, name, served)
        (server_span,) = mine
        assert server_span["parent"] == span_id, (service, name)  # one trace: the server's span is the call's child
        client_said = (span.attributes[S.OUTCOME], span.attributes.get(S.FAILURE_BOUNDARY))
        server_said = (server_span["attributes"][S.OUTCOME], server_span["attributes"].get(S.FAILURE_BOUNDARY))
        assert client_said == server_said == expected, (service, name, client_said, server_said)
    assert len(traces) == len(calls)


async def test_mcp_server_git(repository: str):
    with OtlpReceiver().running() as receiver:
        await _drive(
            receiver,
            "git",
            ["mcp-server-git", "--repository", repository],
            [
                ("git_status", {"repo_path": repository}, OK),
                ("git_log", {"repo_path": repository, "max_count": 1}, OK),
                ("git_show", {"repo_path": repository, "revision": "no-such-revision"}, TOOL_ERROR),
                ("git_push", {"repo_path": repository}, UNKNOWN),
            ],
        )


async def test_mcp_server_time():
    with OtlpReceiver().running() as receiver:
        await _drive(
            receiver,
            "time",
            ["mcp-server-time", "--local-timezone", "UTC"],
            [
                ("get_current_time", {"timezone": "Europe/Paris"}, OK),
                ("get_current_time", {"timezone": "Nowhere/Atlantis"}, TOOL_ERROR),
                ("get_weather", {"city": "Paris"}, UNKNOWN),
            ],
        )


async def test_mcp_server_fetch(page: str):
    with OtlpReceiver().running() as receiver:
        await _drive(
            receiver,
            "fetch",
            ["mcp-server-fetch", "--allow-private-ips", "--ignore-robots-txt"],
            [
                ("fetch", {"url": page}, OK),
                ("fetch_pdf", {"url": page}, UNKNOWN),
            ],
        )
