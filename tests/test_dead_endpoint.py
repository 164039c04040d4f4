"""A dead OTLP endpoint costs one stderr line, not seconds at exit (real subprocesses).

With nothing listening at the endpoint, the OTLP exporters retry each batch with backoff for
up to 10 s, and the SDK flushes every signal at exit. Each process here runs twice: exporting
to a closed loopback port, and with exporting off; the difference in wall time is what the
dead endpoint costs. The bound is generous (3 s): the retries cost 10 s and more.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp import Client
from processes import ONE_LINE_LOGS, free_port

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = """
import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer

import mcpobs

mcpobs.instrument()
server = MCPServer("shop")


@server.tool()
def ping() -> str:
    return "pong"


async def main():
    async with Client(server) as client:
        await client.call_tool("ping", {})


anyio.run(main)
"""
OFF = {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}


def environment(**settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return {**env, "PYTHONUNBUFFERED": "1", **ONE_LINE_LOGS, **settings}


def dead(port: int) -> dict[str, str]:
    return environment(OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{port}")


def added_lines(stderr: str, quiet: str) -> list[str]:
    """The stderr lines the dead endpoint added to a run with exporting off."""
    seen = set(quiet.splitlines())
    return [line for line in stderr.splitlines() if line.strip() and line not in seen]


def timed_script(tmp_path: Path, env: dict[str, str]) -> tuple[float, str]:
    script = tmp_path / "short.py"
    script.write_text(SCRIPT)
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return time.monotonic() - started, done.stderr


def test_a_short_script_exits_on_time_with_one_line_naming_the_endpoint(tmp_path):
    port = free_port()
    off, quiet = timed_script(tmp_path, environment(**OFF))
    exporting, stderr = timed_script(tmp_path, dead(port))
    assert exporting - off < 3, f"{exporting:.1f} s against {off:.1f} s with exporting off:\n{stderr}"
    lines = [line for line in added_lines(stderr, quiet) if "export" in line.lower()]  # not rich's timestamps
    assert len(lines) == 1, stderr
    assert f"http://127.0.0.1:{port}" in lines[0] and "OTEL_EXPORTER_OTLP_ENDPOINT" in lines[0]


async def stop_time(env: dict[str, str], tmp_path: Path) -> tuple[float, str]:
    """Serve examples/shop_http.py, make one call, SIGTERM it; seconds until it exited, and its stderr."""
    port = free_port()
    err = tmp_path / f"stderr-{port}.txt"
    with err.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "examples/shop_http.py", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, err.read_text()
            assert time.monotonic() < deadline, err.read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            await client.call_tool("get_order_status", {"order_id": "O-1873"})
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(60)
        return time.monotonic() - started, err.read_text()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.anyio
async def test_a_uvicorn_server_stops_promptly_after_sigterm(tmp_path):
    port = free_port()
    off, quiet = await stop_time(environment(**OFF), tmp_path)
    exporting, stderr = await stop_time(dead(port), tmp_path)
    assert exporting - off < 3, f"{exporting:.1f} s against {off:.1f} s with exporting off:\n{stderr}"
    lines = [line for line in added_lines(stderr, quiet) if "export" in line.lower()]  # not uvicorn's pid lines
    assert len(lines) == 1, stderr
    assert f"http://127.0.0.1:{port}" in lines[0] and "OTEL_EXPORTER_OTLP_ENDPOINT" in lines[0]
