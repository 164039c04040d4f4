"""Nothing lost in the shapes production runs: each server started for real, SIGTERM after the last reply.

Each test serves the app a user writes (`shapes.APP`) with the command a user types, two
workers where the server has workers, makes calls until both workers answered, sends SIGTERM
right after the last reply and counts at a real OTLP receiver on loopback. Nothing is exported
before the end (`shapes.NOT_BEFORE_THE_END`), so every span and every final count depends on
the flush the worker reaches as it stops.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest
from exiting import exporting_to
from otlp_receiver import OtlpReceiver
from shapes import APP, MOUNTED, NOT_BEFORE_THE_END, OWN_PROVIDERS, count, serve
from test_shutdown_deadline import hanging_collector

from mcpobs import semconv as S

SERVER = 2  # the OTLP span kind

DEADLINE = 3.0  # the default shutdown deadline
SLACK = 7.0  # the server's own stopping, on a loaded machine

SHAPES = ["uvicorn", "uvicorn --workers 2", "gunicorn", "gunicorn --preload", "hypercorn --workers 2"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("shape", "app"),
    [*((shape, APP) for shape in SHAPES), ("uvicorn --workers 2", OWN_PROVIDERS), ("gunicorn --preload", MOUNTED)],
    ids=[*SHAPES, "uvicorn --workers 2, the application's own providers", "gunicorn --preload, mounted in its own app"],
)
async def test_sigterm_right_after_the_last_reply_loses_nothing(shape, app, tmp_path):
    workers = 1 if shape == "uvicorn" else 2
    receiver = OtlpReceiver()
    with receiver.running(), serve(shape, receiver, tmp_path, app) as served:
        await served.call(workers=workers)
        served.stop()
        got = count(receiver)
    print(f"{shape}: {got.line(served)}")
    stderr = served.stderr.read_text()[-3000:]
    assert got.calls == served.calls, f"{got.line(served)}\n{stderr}"
    assert got.duplicates == 0, got.line(served)
    assert len(got.instances) == len(served.pids) == workers, got.line(served)
    assert sum(got.requests.values()) == served.calls, f"{got.line(served)}\n{stderr}"
    assert sum(got.durations.values()) == served.calls, got.line(served)
    assert not got.unmatched, got.unmatched
    assert served.took < DEADLINE + SLACK, got.line(served)


@pytest.mark.anyio
@pytest.mark.parametrize("shape", ["uvicorn --workers 2", "gunicorn --preload"])
async def test_workers_stop_within_the_deadline_behind_a_silent_collector(shape, tmp_path):
    """The flush at the end of the lifespan keeps the deadline: a collector that never answers costs no more."""
    with hanging_collector() as port, serve(shape, port, tmp_path) as served:
        await served.call(workers=2)
        served.stop()
    print(f"{shape} behind a silent collector: stopped in {served.took:.1f} s")
    assert served.took < DEADLINE + SLACK, f"SIGTERM took {served.took:.1f} s"


FORKED = """
import os
import sys

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer

import mcpobs

mcpobs.instrument()
server = MCPServer("shop")


@server.tool()
def ping() -> str:
    return "pong"


async def calls(n):
    async with Client(server) as client:
        for _ in range(n):
            await client.call_tool("ping", {})


anyio.run(calls, 5)  # the parent's five, still in its batch queue and its counts at the fork
child = os.fork()
if child == 0:
    anyio.run(calls, 3)
    sys.exit(0)
os.waitpid(child, 0)
"""


def test_a_fork_after_instrument_exports_each_process_s_own_telemetry_once(tmp_path):
    """The child exports its own 3 calls under its own service.instance.id; the parent's 5 once, by the parent."""
    script = tmp_path / "forked.py"
    script.write_text(FORKED)
    receiver = OtlpReceiver()
    with receiver.running():
        env = exporting_to(receiver.port, **NOT_BEFORE_THE_END)
        done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
    server_calls = Counter(
        s.instance
        for s in receiver.received_spans
        if s.kind == SERVER and s.attributes.get(S.MCP_METHOD_NAME) == "tools/call"
    )
    ids = Counter(s.span_id for s in receiver.received_spans)
    counted = receiver.final_totals(S.SERVER_REQUESTS.name, **{S.MCP_METHOD_NAME: "tools/call"})
    print(f"fork: server tools/call spans per process {sorted(server_calls.values())}, counted {counted}")
    assert sorted(server_calls.values()) == [3, 5], server_calls  # two processes, each its own
    assert max(ids.values()) == 1, "a span was exported twice"
    assert counted == dict(server_calls), f"final counts {counted}, calls {dict(server_calls)}"
