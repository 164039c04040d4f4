"""`instrument()` after an HTTP app is built: one warning line, at run time, naming the fix.

Such an app still gets a span per request (its server is adopted), but the transport
boundary was never added, so the requests the transport refuses go unrecorded. Real
subprocesses serving over uvicorn on loopback; three requests each.
"""

from __future__ import annotations

import os
import subprocess
import sys

from processes import ONE_LINE_LOGS

SCRIPT = """
import socket, sys, threading, time
import anyio, uvicorn
from mcp import Client
from mcp.server.mcpserver import MCPServer
import mcpobs

late = sys.argv[1] == "late"
if not late:
    mcpobs.instrument()
server = MCPServer("shop")


@server.tool()
def ping() -> str:
    return "pong"


app = server.streamable_http_app()
if late:
    mcpobs.instrument()
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
uv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True).start()
while not uv.started:
    time.sleep(0.01)
print("serving", file=sys.stderr, flush=True)


async def main():
    async with Client(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp") as client:
        for _ in range(3):
            await client.call_tool("ping", {})


anyio.run(main)
uv.should_exit = True
"""


def run(order: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(OTEL_TRACES_EXPORTER="none", OTEL_METRICS_EXPORTER="none", **ONE_LINE_LOGS)
    done = subprocess.run([sys.executable, "-c", SCRIPT, order], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    return lines[lines.index("serving") + 1 :]  # what was said once requests came


def test_an_app_built_before_instrument_says_so_once_when_it_serves():
    warnings = [line for line in run("late") if "mcpobs" in line]
    assert len(warnings) == 1, warnings
    assert "built before mcpobs.instrument()" in warnings[0]
    assert "Call mcpobs.instrument() before streamable_http_app()" in warnings[0]


def test_an_app_built_after_instrument_says_nothing():
    assert not [line for line in run("early") if "mcpobs" in line]
