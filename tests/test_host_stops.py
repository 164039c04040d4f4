"""Hosts stopped by SIGTERM mid-call (issue 50): what they finished and what they were doing arrives.

A process manager or a container stops an agent host with SIGTERM. With exports batched (held
back, as a busy host's are), a host used to lose everything it had not exported: 0 of its CLIENT
spans, the completed calls' included, and no count. Now the completed calls arrive `ok`, the one
interrupted arrives `stopped` (`error.type=host_stopped`), each counted, and the host sees what it
saw without mcpobs: its own SIGTERM handler runs, and it exits with the same status. A second
SIGTERM while it flushes (hypercorn sends its workers two, 3 ms apart) waits for the flush: before,
it killed the process at once, and nothing arrived.

Each host runs twice, with mcpobs and without (`off`), at once; the exit statuses must agree.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest
from exiting import exporting_to
from otlp_receiver import OtlpReceiver
from processes import free_port, start, wait_for_port
from shapes import BIN, NOT_BEFORE_THE_END

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

CLIENT = 3  # the OTLP span kind
OK, STOPPED = S.Outcome.OK.value, S.Outcome.STOPPED.value

HOST = """
import signal
import sys

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer

how = sys.argv[1]
if how.endswith("own handler"):
    def leave(signum, frame):
        print("the host's own handler ran", file=sys.stderr, flush=True)
        sys.exit(3)

    signal.signal(signal.SIGTERM, leave)
if how == "own providers":  # the host's own, batched: nothing of mcpobs's at exit
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    import mcpobs

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    reader = PeriodicExportingMetricReader(OTLPMetricExporter())
    mcpobs.instrument(tracer_provider=tracer_provider, meter_provider=MeterProvider(metric_readers=[reader]))
elif not how.startswith("off"):
    import mcpobs

    mcpobs.instrument()
server = MCPServer("shop")


@server.tool()
def quick() -> str:
    return "done"


@server.tool()
async def slow() -> str:
    await anyio.sleep(30)
    return "late"


async def main():
    async with Client(server) as client:
        await client.call_tool("quick", {})
        await client.call_tool("quick", {})
        print("calling", flush=True)
        await client.call_tool("slow", {})


anyio.run(main)
"""


def client_calls(receiver: OtlpReceiver) -> Counter[str]:
    with receiver.lock:
        spans = [s for s in receiver.received_spans if s.kind == CLIENT]
    return Counter(s.attributes[S.OUTCOME] for s in spans if s.attributes.get(S.MCP_METHOD_NAME) == "tools/call")


def client_counted(receiver: OtlpReceiver, outcome: str) -> float:
    labels = {S.MCP_METHOD_NAME: "tools/call", S.OUTCOME: outcome}
    return sum(receiver.final_totals(S.CLIENT_REQUESTS.name, **labels).values())


def run_host(script: Path, how: str, port: int) -> tuple[int | None, str]:
    """Run the host, SIGTERM it once its slow call is in flight; its exit status and stderr."""
    process = subprocess.Popen(
        [sys.executable, str(script), how],
        env=exporting_to(port, **NOT_BEFORE_THE_END),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "calling"
        time.sleep(0.5)  # the slow call in its handler
        process.send_signal(signal.SIGTERM)
        if how.endswith("twice"):  # as hypercorn's main process stops its workers: two, 3 ms apart
            time.sleep(0.003)
            process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, err


@pytest.mark.parametrize("how", ["default", "own providers", "own handler", "SIGTERM twice"])
async def test_a_host_sigtermed_mid_call_exports_its_calls_and_exits_as_without_mcpobs(tmp_path, how):
    script = tmp_path / "host.py"
    script.write_text(HOST)
    receiver = OtlpReceiver()
    results: dict[str, tuple[int | None, str]] = {}

    async def one(variant: str) -> None:
        results[variant] = await anyio.to_thread.run_sync(run_host, script, variant, receiver.port)

    with receiver.running():
        async with anyio.create_task_group() as group:
            group.start_soon(one, how)
            group.start_soon(one, f"off, {how}")
        time.sleep(0.3)
        got = client_calls(receiver)
        counts = {outcome: client_counted(receiver, outcome) for outcome in (OK, STOPPED)}
    status, err = results[how]
    print(f"host SIGTERMed mid-call ({how}): CLIENT spans {dict(got)}, counts {counts}, exit {status}")
    assert status == results[f"off, {how}"][0], (status, results[f"off, {how}"])
    if how == "own handler":
        assert "the host's own handler ran" in err
    assert got[OK] == 2, (got, err[-2000:])
    assert got[STOPPED] == 1, (got, err[-2000:])
    assert counts == {OK: 2, STOPPED: 1}


WEB_APP = """
import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

import mcpobs

mcpobs.instrument()
server = MCPServer("shop")


@server.tool()
async def work(seconds: float = 0.0) -> str:
    await anyio.sleep(seconds)
    return "done"


async def call(request):
    async with Client(server) as client:
        result = await client.call_tool("work", {"seconds": float(request.query_params["seconds"])})
    return JSONResponse({"result": result.structured_content["result"]})


app = Starlette(routes=[Route("/call", call)])
"""


async def test_a_web_app_whose_grace_cuts_its_client_call_exports_it_stopped(tmp_path: Path):
    """A `Client` inside a web app under uvicorn, its grace (1 s) shorter than the call in flight."""
    (tmp_path / "app.py").write_text(WEB_APP)
    receiver = OtlpReceiver()
    port = free_port()
    command = [str(BIN / "uvicorn"), "app:app", "--app-dir", str(tmp_path), "--port", str(port)]
    command += ["--timeout-graceful-shutdown", "1"]
    with receiver.running():
        err = (tmp_path / "stderr.txt").open("w")
        process = start(command, cwd=tmp_path, env=exporting_to(receiver.port, **NOT_BEFORE_THE_END), stderr=err)
        try:
            wait_for_port(port, process, "uvicorn", timeout=60)
            url = f"http://127.0.0.1:{port}/call"
            async with httpx2.AsyncClient(timeout=30) as http:
                for _ in range(3):
                    assert (await http.get(url, params={"seconds": 0})).status_code == 200

                async def cut() -> Any:
                    try:
                        return await http.get(url, params={"seconds": 10})
                    except Exception as exc:
                        return exc

                async with anyio.create_task_group() as group:
                    group.start_soon(cut)
                    await anyio.sleep(1.0)
                    process.send_signal(signal.SIGTERM)
                    await anyio.to_thread.run_sync(process.wait, 30)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        time.sleep(0.3)
        got = client_calls(receiver)
        counts = {outcome: client_counted(receiver, outcome) for outcome in (OK, STOPPED)}
    print(f"web app, uvicorn --timeout-graceful-shutdown 1: CLIENT spans {dict(got)}, counts {counts}")
    assert process.returncode == -signal.SIGTERM  # uvicorn re-raises SIGTERM, as without mcpobs
    assert got == {OK: 3, STOPPED: 1}, got
    assert counts == {OK: 3, STOPPED: 1}
