"""On stdio, stdout is the wire: console telemetry goes to stderr, even when flushed at exit.

The server runs in a subprocess with `instrument()` and nothing but OTEL_* variables choosing
console exporters. The test speaks JSON-RPC to its stdin itself and reads the raw bytes of
its stdout (no SDK client in between to forgive a stray line), then checks every line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpobs import semconv as S

HERE = Path(__file__).parent

SERVER = """
import mcpobs
mcpobs.instrument()
from shop import create_server
create_server().run("stdio")
"""

CONSOLE = {
    "OTEL_TRACES_EXPORTER": "console",
    "OTEL_METRICS_EXPORTER": "console",
    "OTEL_BSP_SCHEDULE_DELAY": "50",
    "OTEL_METRIC_EXPORT_INTERVAL": "200",
    "OTEL_SERVICE_NAME": "shop-stdio",
}

REQUESTS: list[dict[str, Any]] = [
    {
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    },
    {"method": "tools/list", "params": {}},
    {"method": "tools/call", "params": {"name": "get_order_status", "arguments": {"order_id": "O-1873"}}},
    {"method": "tools/call", "params": {"name": "get_order_status", "arguments": {"order_id": "O-0"}}},
    {"method": "tools/call", "params": {"name": "quote_refund", "arguments": {"order_id": "O-1", "amount_cents": -1}}},
    {"method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}},
    {
        "method": "tools/call",
        "params": {"name": "slow_export", "arguments": {"rows": 3}, "_meta": {"progressToken": 7}},
    },
    {"method": "prompts/get", "params": {"name": "refund_reply", "arguments": {"customer": "Ada"}}},
    {"method": "bogus/method", "params": {}},
]


def speak_jsonrpc(env: dict[str, str]) -> tuple[bytes, str, int]:
    """Send every request, wait for every answer, close stdin; (raw stdout, stderr, exit code)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**clean, "PYTHONPATH": str(HERE), **env},
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    stderr: list[bytes] = []
    drain = threading.Thread(target=lambda: stderr.append(proc.stderr.read()), daemon=True)  # type: ignore[union-attr]
    drain.start()
    raw = bytearray()
    try:
        for i, request in enumerate(REQUESTS, start=1):
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, **request}).encode() + b"\n")
            proc.stdin.flush()
            while True:  # until this request's answer (progress notifications come first)
                line = proc.stdout.readline()
                assert line, f"the server closed stdout before answering request {i}"
                raw += line
                if json.loads(line).get("id") == i:
                    break
            if request["method"] == "initialize":
                proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
                proc.stdin.flush()
        proc.stdin.close()  # the client leaves: the server exits and flushes its telemetry
        raw += proc.stdout.read()  # everything written up to and after exit
        code = proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    drain.join(10)
    return bytes(raw), b"".join(stderr).decode(errors="replace"), code


@pytest.mark.parametrize("logs", ["none", "console"])
def test_console_exporters_on_a_stdio_server_leave_stdout_to_json_rpc(logs):
    raw, stderr, code = speak_jsonrpc({**CONSOLE, "OTEL_LOGS_EXPORTER": logs})
    assert code == 0, stderr[-3000:]

    lines = raw.split(b"\n")
    assert lines[-1] == b"", "stdout must end with a complete line"
    messages = [json.loads(line) for line in lines[:-1]]  # every line parses, or this raises
    for message in messages:
        assert message["jsonrpc"] == "2.0"
        assert ("id" in message and ("result" in message or "error" in message)) or "method" in message, message
    answered = sorted(m["id"] for m in messages if "id" in m)
    assert answered == list(range(1, len(REQUESTS) + 1))
    progress = [m for m in messages if m.get("method") == "notifications/progress"]
    assert [p["params"]["progress"] for p in progress] == [1, 2, 3]

    # The telemetry is there, one JSON object per line, on stderr.
    exported = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    spans = {e["name"]: e for e in exported if "context" in e and "kind" in e}
    assert spans["tools/call get_order_status"]["attributes"][S.NETWORK_TRANSPORT] == "pipe"
    assert spans["tools/call quote_refund"]["attributes"][S.OUTCOME] == "server_error"
    assert spans["tools/call"]["attributes"][S.OUTCOME] == "client_error"
    assert S.OTHER in spans  # the bogus method
    metrics = {
        m["name"]
        for e in exported
        for rm in e.get("resource_metrics", ())
        for sm in rm["scope_metrics"]
        for m in sm["metrics"]
    }
    assert {S.SERVER_OPERATION_DURATION.name, S.SERVER_REQUESTS.name} <= metrics
    if logs == "console":
        assert any("body" in e for e in exported)  # the tools' own log records, exported to stderr


# The SDK client in its default mode (protocol 2026-07-28) drives the same server through a tee
# that copies every byte of the server's stdout to a file before the client reads it.
TEE = """
import signal, subprocess, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # let the server finish its exit flush; it ends on EOF
raw_path, err_path, server = sys.argv[1:4]
with open(raw_path, "wb") as raw, open(err_path, "wb") as err:
    proc = subprocess.Popen([sys.executable, "-c", server], stdout=subprocess.PIPE, stderr=err)
    while chunk := proc.stdout.read1(65536):
        raw.write(chunk)
        raw.flush()
        sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
    sys.exit(proc.wait())
"""


@pytest.mark.anyio
async def test_the_sdk_clients_own_session_over_stdio_sees_only_json_rpc_on_the_raw_pipe(tmp_path):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    raw_path, err_path = tmp_path / "stdout.raw", tmp_path / "stderr.txt"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", TEE, str(raw_path), str(err_path), SERVER],
        env={**clean, "PYTHONPATH": str(HERE), **CONSOLE, "OTEL_LOGS_EXPORTER": "console"},
    )
    heard = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append(progress)

    async with Client(params) as client:
        assert not (await client.call_tool("get_order_status", {"order_id": "O-1873"})).is_error
        assert (await client.call_tool("no_such_tool", {})).is_error
        await client.call_tool("slow_export", {"rows": 3}, progress_callback=on_progress)
    assert heard == [1, 2, 3]

    with anyio.fail_after(10):  # the server's exit flush lands after the client has gone
        while "tools/call get_order_status" not in err_path.read_text():
            await anyio.sleep(0.05)
    raw = raw_path.read_bytes()
    assert raw.endswith(b"\n")
    for line in raw.splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert b"2026-07-28" in raw  # the modern protocol, not the legacy handshake of the test above
