"""The stop that does not wait: real servers stopped with calls in flight, exporting to a real OTLP receiver.

Issue 28 made every drained shutdown lose nothing; these are the stops that do not drain
(issue 39). Exports are held back (`shapes.NOT_BEFORE_THE_END`), so every span and count that
arrives was sent by the stop itself:

- a server whose grace period is shorter than a call (gunicorn `--graceful-timeout 2`, a
  SIGKILL 1.5 s after SIGTERM) exports every call it had finished, and records the calls it
  never finished as `stopped`, before the kill;
- a call the server aborts (uvicorn closing a legacy client's stream) is `stopped` with ERROR
  status on the server, as on the client, never `cancelled`;
- a web app whose only MCP part is a `Client`, under `uvicorn --workers 2`, exports every
  CLIENT span and its final count at SIGTERM.

Before the change: 0 of the finished calls' spans and counts under both kills, the aborted
calls `cancelled` (UNSET) on the server and `server_error` on the client, 0 client spans.
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
from functools import partial
from pathlib import Path
from subprocess import DEVNULL, PIPE
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest
from exiting import exporting_to
from mcp import Client
from opentelemetry.trace import SpanKind, StatusCode
from otlp_receiver import OtlpReceiver
from processes import free_port, start, wait_for_http
from shapes import APP, BIN, NOT_BEFORE_THE_END, Served, serve

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

SLOW_APP = APP.replace(
    "app = server.streamable_http_app()",
    '''
@server.tool()
async def slow(seconds: float = 30.0) -> int:
    """Longer than any grace period here: it is in flight when the server stops."""
    import anyio

    await anyio.sleep(seconds)
    return os.getpid()


app = server.streamable_http_app()
''',
)

IN_FLIGHT = 3
"""Calls still running when the server is told to stop."""

SERVER, CLIENT = 2, 3  # OTLP span kinds
STOPPED, OK = S.Outcome.STOPPED.value, S.Outcome.OK.value
TOOLS_CALL = {S.MCP_METHOD_NAME: "tools/call"}


def calls(receiver: OtlpReceiver, kind: int = SERVER) -> Counter[str]:
    """tools/call spans received, by outcome."""
    with receiver.lock:
        spans = [s for s in receiver.received_spans if s.kind == kind and s.attributes.get(S.MCP_METHOD_NAME)]
    return Counter(s.attributes[S.OUTCOME] for s in spans if s.attributes[S.MCP_METHOD_NAME] == "tools/call")


def counted(receiver: OtlpReceiver, outcome: str, metric: str = S.SERVER_REQUESTS.name) -> float:
    """The final count of tools/call with `outcome`, every process's added up."""
    return sum(receiver.final_totals(metric, **TOOLS_CALL, **{S.OUTCOME: outcome}).values())


async def slow_calls(url: str, failures: list[BaseException], **options: Any) -> None:
    """One client's call that outlives the server; what it raised goes into `failures`."""
    with anyio.move_on_after(20):
        try:
            async with Client(url, **options) as client:
                await client.call_tool("slow", {"seconds": 30})
        except Exception as exc:
            failures.append(exc)


async def stopped_mid_calls(served: Served, stop: Any, **options: Any) -> list[BaseException]:
    """`IN_FLIGHT` slow calls, then `stop()` while they run; what the clients raised."""
    failures: list[BaseException] = []
    async with anyio.create_task_group() as group:
        for _ in range(IN_FLIGHT):
            group.start_soon(partial(slow_calls, served.url, failures, **options))
        await anyio.sleep(2.0)  # connected, initialized, each call in its handler
        await anyio.to_thread.run_sync(stop)
    return failures


async def test_gunicorn_with_a_grace_shorter_than_a_call_exports_the_finished_calls_and_the_stopped(tmp_path):
    receiver = OtlpReceiver()
    with receiver.running(), serve("gunicorn", receiver, tmp_path, SLOW_APP, ("--graceful-timeout", "2")) as served:
        await served.call(workers=2, clients=4, each=3)
        await stopped_mid_calls(served, served.stop)
        time.sleep(0.3)
        got = calls(receiver)
    print(f"gunicorn --graceful-timeout 2: {dict(got)} of {served.calls} finished + {IN_FLIGHT} in flight")
    assert got[OK] == served.calls, got
    assert counted(receiver, OK) == served.calls
    assert got[STOPPED] == IN_FLIGHT, got
    assert counted(receiver, STOPPED) == IN_FLIGHT
    assert got[S.Outcome.CANCELLED.value] == 0


async def test_uvicorn_killed_1_5_s_after_sigterm_exports_the_finished_calls_and_the_stopped(tmp_path):
    """The orchestrator's kill, 1.5 s after SIGTERM, as the operator told mcpobs (issue 50: no guess)."""
    receiver = OtlpReceiver()
    kill = {"OTEL_PYTHON_MCP_TERMINATION_GRACE": "1.5"}
    with receiver.running(), serve("uvicorn", receiver, tmp_path, SLOW_APP, **kill) as served:
        await served.call(clients=4, each=3)

        def sigterm_then_kill() -> None:
            served.process.send_signal(signal.SIGTERM)
            time.sleep(1.5)
            os.killpg(served.process.pid, signal.SIGKILL)  # a container's grace period ends
            served.process.wait(10)

        await stopped_mid_calls(served, sigterm_then_kill)
        time.sleep(0.3)
        got = calls(receiver)
    print(f"uvicorn, SIGKILL 1.5 s after SIGTERM: {dict(got)} of {served.calls} finished + {IN_FLIGHT} in flight")
    assert got[OK] == served.calls, got
    assert counted(receiver, OK) == served.calls
    assert got[STOPPED] == IN_FLIGHT, got
    assert counted(receiver, STOPPED) == IN_FLIGHT


HYPERCORN_WAITS = sys.version_info >= (3, 12)
"""hypercorn ignores `--graceful-timeout` while a connection is open on 3.12+ (pgjones/hypercorn#308:
`asyncio.Server.wait_closed()` waits for every connection there), so SIGTERM alone aborts nothing."""


def aborting(served: Served, shape: str) -> None:
    """Stop the server so that it aborts the calls in flight: SIGTERM, or where the server would
    wait on them for ever (hypercorn on 3.12+), SIGTERM and the orchestrator's SIGKILL 3 s later."""
    if not (shape.startswith("hypercorn") and HYPERCORN_WAITS):
        served.stop()
        return
    served.process.send_signal(signal.SIGTERM)
    time.sleep(3)
    assert served.process.poll() is None, "hypercorn stopped within 3 s of SIGTERM: #308 is fixed, drop the kill"
    os.killpg(served.process.pid, signal.SIGKILL)
    served.process.wait(10)


@pytest.mark.parametrize(
    ("shape", "options"),
    [
        ("uvicorn", ("--timeout-graceful-shutdown", "1")),
        ("hypercorn --workers 2", ("--workers", "1", "--graceful-timeout", "1")),
    ],
)
async def test_a_legacy_clients_call_the_server_aborts_is_stopped_on_both_sides(
    tmp_path, mcpobs_telemetry, shape, options
):
    """One worker: a legacy session lives in the worker that created it (no affinity across workers)."""
    receiver = OtlpReceiver()
    # where hypercorn waits (3.12+) the orchestrator's kill ends the calls: the operator tells mcpobs when
    kill = {"OTEL_PYTHON_MCP_TERMINATION_GRACE": "3"} if shape.startswith("hypercorn") and HYPERCORN_WAITS else {}
    with receiver.running(), serve(shape, receiver, tmp_path, SLOW_APP, options, **kill) as served:
        failures = await stopped_mid_calls(served, partial(aborting, served, shape), mode="legacy")
        time.sleep(0.3)
        with receiver.lock:
            server = [s for s in receiver.received_spans if s.kind == SERVER and s.name == "tools/call slow"]
    client = [
        s
        for s in mcpobs_telemetry.spans()
        if s.kind is SpanKind.CLIENT and (s.attributes or {}).get(S.MCP_METHOD_NAME) == "tools/call"
    ]
    print(
        f"legacy client, {shape} {options}, SIGTERM: server {[s.attributes[S.OUTCOME] for s in server]}, "
        f"client {[(s.attributes or {}).get(S.OUTCOME) for s in client]}, {len(failures)} clients raised"
    )
    assert len(server) == len(client) == IN_FLIGHT
    for span in server:
        assert span.attributes[S.OUTCOME] == STOPPED
        assert span.attributes[S.ERROR_TYPE] == S.SERVER_STOPPED
        assert span.status == StatusCode.ERROR.value
    for span in client:
        attributes = span.attributes or {}
        assert (attributes[S.OUTCOME], attributes[S.ERROR_TYPE]) == (STOPPED, S.SERVER_STOPPED)
        assert span.status.status_code is StatusCode.ERROR


WEB_APP = """
import contextlib
import json
import os
import subprocess
import time

from mcp import Client
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

import mcpobs

mcpobs.instrument()
server = MCPServer("shop")


@server.tool()
def whoami() -> int:
    return os.getpid()


async def call(request):
    time.sleep(float(request.query_params.get("hold", 0)))  # blocks this worker: the next request goes to another
    async with Client(server) as client:
        result = await client.call_tool("whoami", {})
    return JSONResponse({"pid": result.structured_content["result"]})


app = Starlette(routes=[Route("/call", call)])
"""


async def test_a_client_in_a_web_app_under_uvicorn_workers_exports_every_call_at_sigterm(tmp_path: Path):
    (tmp_path / "app.py").write_text(WEB_APP)
    receiver = OtlpReceiver()
    port = free_port()
    command = [str(BIN / "uvicorn"), "app:app", "--app-dir", str(tmp_path), "--port", str(port), "--workers", "2"]
    pids: Counter[int] = Counter()
    with receiver.running():
        err = (tmp_path / "stderr.txt").open("w")
        process = start(command, cwd=tmp_path, env=exporting_to(receiver.port, **NOT_BEFORE_THE_END), stderr=err)
        try:
            wait_for_http(port, process, "uvicorn --workers 2")

            async def one(i: int, http: httpx2.AsyncClient) -> None:
                await anyio.sleep(0.05 * i)
                for n in range(3):
                    hold = 0.2 if n == 0 else 0
                    # a new connection per call: kept-alive ones stay with the worker that accepted them
                    reply = await http.get(
                        f"http://127.0.0.1:{port}/call", params={"hold": hold}, headers={"Connection": "close"}
                    )
                    pids[reply.json()["pid"]] += 1

            async with httpx2.AsyncClient(timeout=30) as http:
                for _ in range(10):
                    async with anyio.create_task_group() as group:
                        for i in range(6):
                            group.start_soon(one, i, http)
                    if len(pids) == 2:
                        break
            process.send_signal(signal.SIGTERM)
            process.wait(30)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        time.sleep(0.3)
        made = sum(pids.values())
        got = calls(receiver, CLIENT)
        final = counted(receiver, OK, S.CLIENT_REQUESTS.name)
    print(f"client in a web app, uvicorn --workers 2, SIGTERM: {got[OK]} of {made} CLIENT spans, count {final:g}")
    assert len(pids) == 2, pids
    assert got[OK] == made
    assert final == made


STDIO = """
import contextlib
import json
import os
import subprocess

import anyio
from mcp.server.mcpserver import Context, MCPServer

import mcpobs

mcpobs.instrument()
server = MCPServer("shop")


@server.tool()
def whoami() -> int:
    return os.getpid()


@server.tool()
async def slow(ctx: Context, seconds: float = 30.0) -> int:
    for step in range(int(seconds * 10)):
        await ctx.report_progress(step + 1, seconds * 10)
        await anyio.sleep(0.1)
    return os.getpid()


server.run("stdio")
"""


async def test_a_stdio_server_sigtermed_mid_call_records_every_call_and_orphans_no_progress(tmp_path: Path):
    from mcp.client.stdio import StdioServerParameters

    script = tmp_path / "stdio_shop.py"
    script.write_text(STDIO)
    receiver = OtlpReceiver()
    heard: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append(progress)

    with receiver.running():
        env = exporting_to(receiver.port, **NOT_BEFORE_THE_END)
        params = StdioServerParameters(command=sys.executable, args=[str(script)], env=env)
        with anyio.move_on_after(30):
            try:
                async with Client(params) as client:
                    pid = 0
                    for _ in range(3):
                        pid = int((await client.call_tool("whoami", {})).structured_content["result"])  # type: ignore[index]
                    async with anyio.create_task_group() as group:
                        group.start_soon(partial(client.call_tool, "slow", {}, progress_callback=on_progress))
                        while len(heard) < 5:
                            await anyio.sleep(0.05)
                        os.kill(pid, signal.SIGTERM)  # as an orchestrator or a host would, mid-call
            except Exception:
                pass  # the client sees its server die under the call
        time.sleep(0.5)
        got = calls(receiver)
        with receiver.lock:
            spans = list(receiver.received_spans)
    # A SERVER span's parent may be its caller's CLIENT span, in another process (when the client side
    # propagates: an earlier test's global tracer provider is enough); the server's own children may not.
    orphans = [s.name for s in spans if s.kind != SERVER and s.parent and s.parent not in {p.span_id for p in spans}]
    print(f"stdio server SIGTERMed mid-call: {dict(got)}, {len(spans)} spans, {len(orphans)} without their parent")
    assert got[OK] == 3, got
    assert got[STOPPED] == 1, got
    assert counted(receiver, STOPPED) == 1
    assert len(spans) > 5  # the progress spans exported under the call
    assert orphans == []


async def test_granian_with_a_kill_timeout_shorter_than_a_call_exports_the_finished_calls_and_the_stopped(tmp_path):
    receiver = OtlpReceiver()
    options = ("--workers-kill-timeout", "2")
    with receiver.running(), serve("granian --workers 2", receiver, tmp_path, SLOW_APP, options) as served:
        await served.call(workers=2, clients=4, each=3)
        await stopped_mid_calls(served, served.stop)
        time.sleep(0.3)
        got = calls(receiver)
    print(f"granian --workers-kill-timeout 2: {dict(got)} of {served.calls} finished + {IN_FLIGHT} in flight")
    assert got[OK] == served.calls, got
    assert counted(receiver, OK) == served.calls
    assert got[STOPPED] == IN_FLIGHT, got
    assert counted(receiver, STOPPED) == IN_FLIGHT


def _line(process: Any, message: dict[str, Any]) -> None:
    process.stdin.write((json.dumps(message) + "\n").encode())
    process.stdin.flush()


async def test_a_stdio_server_whose_host_vanishes_mid_call_records_the_caller_gone(tmp_path: Path):
    """A host that goes away (killed, crashed) closes stdin with no `notifications/cancelled`; the
    SDK's host then waits 2 s, SIGTERMs, waits 2 s, SIGKILLs. The call in flight is the caller's
    doing, not the server's failure (issue 50 decided it; issue 39 had said `stopped`): `cancelled`,
    as on mcp 1.x (tests/sdk1/test_server1_stops.py)."""
    script = tmp_path / "stdio_shop.py"
    script.write_text(STDIO)
    receiver = OtlpReceiver()
    with receiver.running():
        env = exporting_to(receiver.port, **NOT_BEFORE_THE_END)
        process = start([sys.executable, str(script)], env=env, stdin=PIPE, stdout=PIPE, stderr=DEVNULL)
        try:
            version = "2025-11-25"
            hello = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}}
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
        got = calls(receiver)
        with receiver.lock:
            spans = list(receiver.received_spans)
    # A SERVER span's parent may be its caller's CLIENT span, in another process (when the client side
    # propagates: an earlier test's global tracer provider is enough); the server's own children may not.
    orphans = [s.name for s in spans if s.kind != SERVER and s.parent and s.parent not in {p.span_id for p in spans}]
    print(f"stdio host quits mid-call: {dict(got)}, {len(spans)} spans, {len(orphans)} without their parent")
    assert got == {OK: 3, S.Outcome.CANCELLED.value: 1}, got
    assert counted(receiver, S.Outcome.CANCELLED.value) == 1
    assert orphans == []
