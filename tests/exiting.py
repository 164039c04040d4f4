"""Instrumented programs run as real subprocesses, timed from start (or SIGTERM) to exit.

The tests of a dead or silent OTLP endpoint share them: a short script that makes a few
calls in memory and exits, and examples/shop_http.py served over HTTP and sent SIGTERM.
Each child's environment has no OTEL_* variable but those a test passes, and one log record
per stderr line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from mcp import Client
from processes import ONE_LINE_LOGS, free_port, wait_for_port

import mcpobs

ROOT = Path(__file__).resolve().parent.parent
SOURCE = Path(mcpobs.__file__).resolve().parent.parent
"""Where the test process's mcpobs comes from: a child imports the same one (a worktree's, not an install's)."""

SHORT_SCRIPT = """
import os
import sys
import time

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer

import mcpobs

with open(os.environ["MCPOBS_TEST_IMPORTED"], "w") as mark:  # imports done: what the test times starts here
    mark.write(repr(time.time()))
mcpobs.instrument()
server = MCPServer("shop")


@server.tool()
def ping() -> str:
    return "pong"


async def main():
    async with Client(server) as client:
        for _ in range(int(sys.argv[1])):
            await client.call_tool("ping", {})


anyio.run(main)
"""

OFF = {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}
"""Exporting off: the run every other is compared with."""


def environment(**settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    path = os.pathsep.join([str(SOURCE), str(ROOT / "examples")])
    return {**env, "PYTHONUNBUFFERED": "1", "PYTHONPATH": path, **ONE_LINE_LOGS, **settings}


def exporting_to(port: int, **settings: str) -> dict[str, str]:
    return environment(OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{port}", **settings)


def run_short_script(tmp_path: Path, env: dict[str, str], calls: int = 1) -> tuple[float, str]:
    """Seconds from the end of SHORT_SCRIPT's imports (`instrument()`, `calls` tool calls, the exit)
    to its exit, and its stderr.

    Not from its start: importing mcp and OpenTelemetry is most of a short script's time, the same
    with and without exporting, and on a loaded machine it alone varies by seconds between runs.
    """
    script = tmp_path / "short.py"
    script.write_text(SHORT_SCRIPT)
    imported = tmp_path / "imported.txt"
    done = subprocess.run(
        [sys.executable, str(script), str(calls)],
        env={**env, "MCPOBS_TEST_IMPORTED": str(imported)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    ended = time.time()
    assert done.returncode == 0, done.stderr[-3000:]
    return ended - float(imported.read_text()), done.stderr


async def sigterm_time(tmp_path: Path, env: dict[str, str], calls: int = 1) -> tuple[float, str]:
    """Serve examples/shop_http.py, make `calls` calls, SIGTERM it: seconds until it exited, and its stderr."""
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
        wait_for_port(port, process, "the shop", timeout=30)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            for _ in range(calls):
                await client.call_tool("get_order_status", {"order_id": "O-1873"})
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(90)
        return time.monotonic() - started, err.read_text()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
