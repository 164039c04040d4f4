"""Shutdown has a deadline, whatever the collector does (real subprocesses, a real hanging listener).

A collector that accepts TCP connections and never answers (here a loopback socket that
listens and never accepts: the kernel completes every handshake) used to hold shutdown
hostage: SIGTERM took 40 s for an HTTP server, a short script exited 15 s late, and a stdio
server was killed by the SDK's host (stdin closed, 2 s, SIGTERM, 2 s, SIGKILL). Now the
reachability check sees the silence, and the flush at exit takes at most the deadline
(`OTEL_PYTHON_MCP_SHUTDOWN_TIMEOUT`, 3 s by default). The bounds asserted are loose, functional
deadlines (deadline + 3 s), not performance measurements. A SIGTERM landing while the main
thread holds the SDK's metric lock no longer stalls (the flush never runs in the handler), and
the final metrics still arrive.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from exiting import OFF, environment, exporting_to, run_short_script, sigterm_time
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from otlp_receiver import OtlpReceiver
from processes import free_port

from mcpobs._core import reachability

DEADLINE = 3.0  # the default
SLACK = 3.0

STDIO_SERVER = """
from mcp.server.mcpserver import MCPServer

import mcpobs

mcpobs.instrument()
server = MCPServer("shop")


@server.tool()
def ping() -> str:
    return "pong"


server.run("stdio")
"""

LOCKED = """
import sys, time

import mcpobs

mcpobs.instrument()
from opentelemetry import metrics

provider = metrics.get_meter_provider()
counter = metrics.get_meter("locked").create_counter("locked.work")
lock = provider._measurement_consumer._lock  # what a collect takes: the final flush needs it
print("ready", flush=True)
while True:
    counter.add(1)
    with lock:  # the main thread holds the lock most of the time, as a busy recorder might
        time.sleep(0.3)
    time.sleep(0.02)
"""


@contextmanager
def hanging_collector() -> Iterator[int]:
    """A port that accepts TCP connections (the kernel's backlog) and never answers one."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def test_the_reachability_check_calls_a_silent_collector_unreachable():
    with hanging_collector() as port:
        started = time.monotonic()
        assert not reachability._answers("127.0.0.1", port, tls=False)
        assert time.monotonic() - started < reachability._CONNECT_TIMEOUT + reachability._ANSWER_TIMEOUT + 1
    receiver = OtlpReceiver()
    with receiver.running():
        assert reachability._answers("127.0.0.1", receiver.port, tls=False)  # any HTTP answer will do
    assert not reachability._answers("127.0.0.1", free_port(), tls=False)


def test_a_collector_back_on_its_port_is_used_at_the_next_export():
    """A refusal is not reused: the batch made just after a restart is exported, not dropped."""
    port = free_port()
    endpoint = reachability.Endpoint("127.0.0.1", port)
    url = f"http://127.0.0.1:{port}/v1/traces"
    assert not endpoint.reachable(url, "OTEL_EXPORTER_OTLP_ENDPOINT", defaulted=False)
    with OtlpReceiver(port).running():
        assert endpoint.reachable(url, "OTEL_EXPORTER_OTLP_ENDPOINT", defaulted=False)
    with hanging_collector() as silent:  # a silence costs seconds to see: that one is reused
        endpoint = reachability.Endpoint("127.0.0.1", silent)
        assert not endpoint.reachable(url, "OTEL_EXPORTER_OTLP_ENDPOINT", defaulted=False)
        started = time.monotonic()
        assert not endpoint.reachable(url, "OTEL_EXPORTER_OTLP_ENDPOINT", defaulted=False)
        assert time.monotonic() - started < reachability._QUICK_REFUSAL


def test_a_short_script_exits_within_the_deadline_behind_a_silent_collector(tmp_path):
    off, _ = run_short_script(tmp_path, environment(**OFF), calls=20)
    with hanging_collector() as port:
        hung, _ = run_short_script(tmp_path, exporting_to(port), calls=20)
    print(f"short script behind a silent collector: {hung:.1f} s, {off:.1f} s with exporting off")
    assert hung - off < DEADLINE + SLACK, f"{hung:.1f} s against {off:.1f} s with exporting off"


@pytest.mark.anyio
async def test_an_http_server_stops_within_the_deadline_after_sigterm_behind_a_silent_collector(tmp_path):
    with hanging_collector() as port:
        hung, _ = await sigterm_time(tmp_path, exporting_to(port), calls=5)
    print(f"HTTP server, SIGTERM to exit behind a silent collector: {hung:.1f} s")
    assert hung < DEADLINE + SLACK, f"SIGTERM took {hung:.1f} s"


@pytest.mark.anyio
async def test_a_stdio_server_exits_before_its_host_kills_it_behind_a_silent_collector(tmp_path):
    script = tmp_path / "stdio_shop.py"
    script.write_text(STDIO_SERVER)
    with hanging_collector() as port:
        params = StdioServerParameters(command=sys.executable, args=[str(script)], env=exporting_to(port))
        async with Client(params) as client:
            for _ in range(5):
                await client.call_tool("ping", {})
            started = time.monotonic()
        closed = time.monotonic() - started
    # The host waits 2 s after closing stdin, then SIGTERMs and waits 2 s more, then SIGKILLs:
    # under 4 s, the server ended on its own, its flush done or given up within the deadline.
    print(f"stdio server, host closing it behind a silent collector: {closed:.1f} s")
    assert closed < 3.9, f"the host needed {closed:.1f} s to stop the server: it was killed"


# -- a SIGTERM that lands while the main thread holds the SDK's metric lock --------------------


def test_a_sigterm_while_the_metric_lock_is_held_flushes_the_final_metrics_without_stalling(tmp_path):
    script = tmp_path / "locked.py"
    script.write_text(LOCKED)
    receiver = OtlpReceiver()
    with receiver.running():
        env = exporting_to(receiver.port, OTEL_TRACES_EXPORTER="none", OTEL_METRIC_EXPORT_INTERVAL="600000")
        process = subprocess.Popen(
            [sys.executable, str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            assert process.stdout is not None and process.stdout.readline().strip() == "ready"
            time.sleep(0.5)
            started = time.monotonic()
            process.send_signal(signal.SIGTERM)
            process.wait(90)
            took = time.monotonic() - started
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    print(f"SIGTERM while the metric lock is held: {took:.1f} s")
    assert process.returncode == -signal.SIGTERM  # it still dies of SIGTERM, as it would without mcpobs
    assert took < DEADLINE + SLACK, f"SIGTERM took {took:.1f} s"
    assert "locked.work" in receiver.metric_names, "the final metrics were lost"
