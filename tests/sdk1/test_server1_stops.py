"""mcp 1.x servers stopped with calls in flight (issue 39): what they finished arrives, what they did not is `stopped`.

The 1.x line has no middleware chain: its calls register with the stop where the lowlevel
`Server` dispatches them (`_server/sdk1/dispatch.py` through the shared middleware steps). A FastMCP 1
app under uvicorn, killed 1.5 s after SIGTERM, and a FastMCP 1 stdio server SIGTERMed mid-call,
each exporting to a real OTLP receiver with exports held back until the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from otlp_receiver import OtlpReceiver

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

BIN = Path(sys.executable).parent
HELD_BACK = {"OTEL_BSP_SCHEDULE_DELAY": "600000", "OTEL_METRIC_EXPORT_INTERVAL": "600000"}
IN_FLIGHT = 3
STOPPED, OK, CANCELLED = S.Outcome.STOPPED.value, S.Outcome.OK.value, S.Outcome.CANCELLED.value

APP = """
import os

import anyio
from mcp.server.fastmcp import Context, FastMCP

import mcpobs

mcpobs.instrument()
server = FastMCP("shop")


@server.tool()
def whoami() -> int:
    return os.getpid()


@server.tool()
async def slow(ctx: Context, seconds: float = 30.0) -> int:
    for step in range(int(seconds * 10)):
        await ctx.report_progress(step + 1, seconds * 10)
        await anyio.sleep(0.1)
    return os.getpid()


app = server.streamable_http_app()
if __name__ == "__main__":
    server.run("stdio")
"""


def environment(port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}", **HELD_BACK}


def tools_calls(receiver: OtlpReceiver) -> Counter[str]:
    with receiver.lock:
        spans = list(receiver.received_spans)
    return Counter(
        s.attributes[S.OUTCOME] for s in spans if s.kind == 2 and s.attributes.get(S.MCP_METHOD_NAME) == "tools/call"
    )


def counted(receiver: OtlpReceiver, outcome: str) -> float:
    totals = receiver.final_totals(S.SERVER_REQUESTS.name, **{S.MCP_METHOD_NAME: "tools/call", S.OUTCOME: outcome})
    return sum(totals.values())


async def call(url: str, tool: str, times: int = 1) -> bool:
    """`times` calls of `tool` in one session; False if the server failed them (or died under them)."""
    with anyio.move_on_after(20):
        try:
            async with streamablehttp_client(url) as (read, write, _), ClientSession(read, write) as session:
                await session.initialize()
                for _ in range(times):
                    await session.call_tool(tool, {})
            return True
        except Exception:
            pass  # the slow calls see their server die under them
    return False


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_a_1x_server_under_uvicorn_killed_after_sigterm_exports_the_finished_and_the_stopped(tmp_path):
    (tmp_path / "app.py").write_text(APP)
    receiver = OtlpReceiver()
    port = free_port()
    command = [str(BIN / "uvicorn"), "app:app", "--app-dir", str(tmp_path), "--port", str(port)]
    with receiver.running():
        env = {
            **environment(receiver.port),
            "OTEL_PYTHON_MCP_TERMINATION_GRACE": "1.5",
        }  # the kill, as the operator says
        process = subprocess.Popen(command, env=env, stderr=(tmp_path / "stderr.txt").open("w"), start_new_session=True)
        try:
            url = f"http://127.0.0.1:{port}/mcp"
            for _ in range(200):
                if await call(url, "whoami", 0):
                    break
                await anyio.sleep(0.1)
            for _ in range(4):
                assert await call(url, "whoami", 3)
            async with anyio.create_task_group() as group:
                for _ in range(IN_FLIGHT):
                    group.start_soon(call, url, "slow")
                await anyio.sleep(2.0)
                process.send_signal(signal.SIGTERM)
                await anyio.sleep(1.5)
                os.killpg(process.pid, signal.SIGKILL)  # a container's grace period ends
                process.wait(10)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        time.sleep(0.3)
        got = tools_calls(receiver)
    print(f"mcp 1.x under uvicorn, SIGKILL 1.5 s after SIGTERM: {dict(got)} of 12 finished + {IN_FLIGHT} in flight")
    assert got[OK] == 12, got
    assert counted(receiver, OK) == 12
    assert got[STOPPED] == IN_FLIGHT, got
    assert counted(receiver, STOPPED) == IN_FLIGHT


async def test_a_1x_stdio_server_sigtermed_mid_call_records_every_call_and_orphans_no_progress(tmp_path):
    from mcp.client.stdio import StdioServerParameters, stdio_client

    (tmp_path / "app.py").write_text(APP)
    receiver = OtlpReceiver()
    heard: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append(progress)

    with receiver.running():
        params = StdioServerParameters(
            command=sys.executable, args=[str(tmp_path / "app.py")], env=environment(receiver.port)
        )
        with anyio.move_on_after(30):
            try:
                async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                    await session.initialize()
                    pid = 0
                    for _ in range(3):
                        result = await session.call_tool("whoami", {})
                        pid = int(result.structuredContent["result"])  # type: ignore[index]
                    async with anyio.create_task_group() as group:

                        async def slow() -> None:
                            await session.call_tool("slow", {}, progress_callback=on_progress)

                        group.start_soon(slow)
                        while len(heard) < 5:
                            await anyio.sleep(0.05)
                        os.kill(pid, signal.SIGTERM)
            except Exception:
                pass
        time.sleep(0.5)
        got = tools_calls(receiver)
        with receiver.lock:
            spans = list(receiver.received_spans)
    # A SERVER span's parent may be its caller's CLIENT span, in another process (when the client side
    # propagates: an earlier test's global tracer provider is enough); the server's own children may not.
    orphans = [s.name for s in spans if s.kind != 2 and s.parent and s.parent not in {p.span_id for p in spans}]
    print(f"mcp 1.x stdio server SIGTERMed mid-call: {dict(got)}, {len(spans)} spans, {len(orphans)} orphans")
    assert got[OK] == 3, got
    assert got[STOPPED] == 1, got
    assert counted(receiver, STOPPED) == 1
    assert orphans == []


def _line(process: Any, message: dict[str, Any]) -> None:
    process.stdin.write((json.dumps(message) + "\n").encode())
    process.stdin.flush()


async def test_a_1x_stdio_server_whose_host_vanishes_mid_call_records_the_caller_gone(tmp_path):
    """The host killed mid-call (stdin closed, no `notifications/cancelled`; the SDK's host would then
    SIGTERM and SIGKILL): `cancelled`, as on mcp 2.x (tests/test_stops.py), the caller's doing."""
    (tmp_path / "app.py").write_text(APP)
    receiver = OtlpReceiver()
    with receiver.running():
        process = subprocess.Popen(
            [sys.executable, str(tmp_path / "app.py")],
            env=environment(receiver.port),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            hello = {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "host", "version": "1"},
            }
            _line(process, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
            process.stdout.readline()
            _line(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
            for n in range(1, 4):
                _line(process, {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "whoami"}})
                process.stdout.readline()
            slow = {"name": "slow", "arguments": {}, "_meta": {"progressToken": "p"}}
            _line(process, {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": slow})
            for _ in range(5):
                assert b"notifications/progress" in process.stdout.readline()
            process.stdin.close()  # the host is gone
            for sig, wait in ((None, 2.0), (signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
                if sig is not None and process.poll() is None:
                    process.send_signal(sig)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(wait)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        time.sleep(0.3)
        got = tools_calls(receiver)
    print(f"mcp 1.x stdio host vanishes mid-call: {dict(got)}")
    assert got == {OK: 3, CANCELLED: 1}, got
    assert counted(receiver, CANCELLED) == 1


JSON_APP = APP.replace('FastMCP("shop")', 'FastMCP("shop", json_response=JSON)')


@pytest.mark.parametrize("json_response", [False, True], ids=["event stream", "json"])
async def test_a_1x_server_whose_grace_cuts_its_calls_says_stopped_on_both_sides(
    tmp_path, mcpobs_telemetry, json_response
):
    """uvicorn's `--timeout-graceful-shutdown 1` cancels three calls in flight on a FastMCP 1 app:
    `stopped` on the server, and on the 1.x client (instrumented in this process) the same.

    JSON answers: the server's 500 carries `mcpobs-stopped` (without it: `server_error`). An event
    stream has begun (200) before the grace ends: it ends without the answer, and mcp 1.x's client
    waits for it forever (here until the test gives up); the client's span ends `stopped` when the
    stream ends (before: `cancelled` when the host gave up, if it ever did)."""
    (tmp_path / "app.py").write_text(f"JSON = {json_response}\n" + JSON_APP)
    receiver = OtlpReceiver()
    port = free_port()
    command = [str(BIN / "uvicorn"), "app:app", "--app-dir", str(tmp_path), "--port", str(port)]
    command += ["--timeout-graceful-shutdown", "1"]
    got_by_client: list[str] = []

    async def slow(url: str) -> None:
        with anyio.move_on_after(8):
            try:
                async with streamablehttp_client(url) as (read, write, _), ClientSession(read, write) as session:
                    await session.initialize()
                    await session.call_tool("slow", {})
                    got_by_client.append(OK)
            except BaseException as exc:
                got_by_client.append(type(exc).__name__)

    with receiver.running():
        env = environment(receiver.port)
        process = subprocess.Popen(command, env=env, stderr=(tmp_path / "stderr.txt").open("w"), start_new_session=True)
        try:
            url = f"http://127.0.0.1:{port}/mcp"
            for _ in range(200):
                if await call(url, "whoami", 0):
                    break
                await anyio.sleep(0.1)
            async with anyio.create_task_group() as group:
                for _ in range(IN_FLIGHT):
                    group.start_soon(slow, url)
                await anyio.sleep(2.0)
                process.send_signal(signal.SIGTERM)
                await anyio.to_thread.run_sync(process.wait, 20)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        time.sleep(0.3)
        got = tools_calls(receiver)
    clients = Counter(
        (s.attributes or {}).get(S.OUTCOME)
        for s in mcpobs_telemetry.spans()
        if s.name.startswith("tools/call") and s.kind.name == "CLIENT"
    )
    print(
        f"mcp 1.x under uvicorn, grace 1 s: server {dict(got)}, clients got {got_by_client}, client spans {dict(clients)}"
    )
    assert got[STOPPED] == IN_FLIGHT, got
    assert clients == {STOPPED: IN_FLIGHT}, (clients, got_by_client)
