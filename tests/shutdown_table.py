"""Measure what each server shape loses when it stops: the table of docs/production.md.

    .venv/bin/python tests/shutdown_table.py            # every shape and every way to stop
    .venv/bin/python tests/shutdown_table.py uvicorn    # the shapes whose name starts so

Each cell starts the shape for real (`shapes.serve`; a script and a stdio server under the
SDK's own host here), makes the calls (both workers answering where there are two), stops it
right after the last reply, and counts at a real OTLP receiver the `tools/call` server spans
and the final `mcpobs.server.requests` count of every process. Nothing is exported before
the end (`shapes.NOT_BEFORE_THE_END`): what arrives is what the stop let the process flush;
under SIGKILL that is what a process loses of everything since its last scheduled export.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from exiting import exporting_to
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from otlp_receiver import OtlpReceiver
from shapes import NOT_BEFORE_THE_END, count, serve

from mcpobs import semconv as S

CALLS = 40

SCRIPT = """
import os
import sys
import time

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer

import mcpobs

mcpobs.instrument()
server = MCPServer("shop")


@server.tool()
def whoami() -> int:
    return os.getpid()


async def main():
    async with Client(server) as client:
        for _ in range(int(sys.argv[1])):
            await client.call_tool("whoami", {})


anyio.run(main)
print("done", flush=True)
if sys.argv[2] == "wait":
    time.sleep(120)
"""

STDIO = """
import os

from mcp.server.mcpserver import MCPServer

import mcpobs

mcpobs.instrument()
server = MCPServer("shop")


@server.tool()
def whoami() -> int:
    return os.getpid()


server.run("stdio")
"""

HTTP_SHAPES = ["uvicorn", "uvicorn --workers 2", "gunicorn", "gunicorn --preload", "hypercorn --workers 2"]
SHAPES = ["script", "stdio under a host", *HTTP_SHAPES]
STOPS = {"SIGTERM": signal.SIGTERM, "SIGINT": signal.SIGINT, "normal exit": None, "SIGKILL": signal.SIGKILL}


def tally(receiver: OtlpReceiver) -> tuple[int, float]:
    spans = sum(
        1 for s in receiver.received_spans if s.kind == 2 and s.attributes.get(S.MCP_METHOD_NAME) == "tools/call"
    )
    counted = receiver.final_totals(S.SERVER_REQUESTS.name, **{S.MCP_METHOD_NAME: "tools/call"})
    return spans, sum(counted.values())


async def script(receiver: OtlpReceiver, tmp: Path, sig: int | None) -> tuple[int, float]:
    path = tmp / "script.py"
    path.write_text(SCRIPT)
    env = exporting_to(receiver.port, **NOT_BEFORE_THE_END)
    process = subprocess.Popen(
        [sys.executable, str(path), str(CALLS), "wait" if sig else "exit"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == b"done"
    started = time.monotonic()
    if sig is not None:
        os.killpg(process.pid, sig) if sig != signal.SIGTERM else process.send_signal(sig)
    process.wait(60)
    return CALLS, time.monotonic() - started


async def stdio(receiver: OtlpReceiver, tmp: Path, sig: int | None) -> tuple[int, float]:
    path = tmp / "stdio_server.py"
    path.write_text(STDIO)
    env = exporting_to(receiver.port, **NOT_BEFORE_THE_END)
    params = StdioServerParameters(command=sys.executable, args=[str(path)], env=env)
    started = time.monotonic()
    try:
        async with Client(params) as client:
            pid = 0
            for _ in range(CALLS):
                result = await client.call_tool("whoami", {})
                pid = int(result.structured_content["result"])  # type: ignore[index]
            started = time.monotonic()
            if sig is not None:
                os.kill(pid, sig)
                with anyio.move_on_after(5):
                    while _alive(pid):
                        await anyio.sleep(0.05)
                if _alive(pid):
                    return CALLS, -1.0  # still serving; the host closes it as it leaves, below
    except Exception:
        pass  # the host sees its server die under it
    return CALLS, time.monotonic() - started


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


async def http(shape: str, receiver: OtlpReceiver, tmp: Path, sig: int) -> tuple[int, float]:
    workers = 2 if "2" in shape or shape.startswith("gunicorn") else 1
    with serve(shape, receiver, tmp) as served:
        await served.call(workers=workers, clients=8, each=CALLS // 8)
        served.stop(sig)
        got = count(receiver)
        assert got.duplicates == 0, got.line(served)
    return served.calls, served.took


async def cell(shape: str, sig: int | None) -> str:
    receiver = OtlpReceiver()
    with receiver.running(), tempfile.TemporaryDirectory() as tmp:
        if shape == "script":
            calls, took = await script(receiver, Path(tmp), sig)
        elif shape == "stdio under a host":
            calls, took = await stdio(receiver, Path(tmp), sig)
        elif sig is None:
            return "n/a"
        else:
            calls, took = await http(shape, receiver, Path(tmp), sig)
        time.sleep(0.2)
        spans, counted = tally(receiver)
    lost = "nothing" if spans == calls and counted == calls else f"**{calls - spans} of {calls} spans**"
    if counted != calls and spans == calls:
        lost = f"**counts: {counted:g} of {calls}**"
    elif counted != calls:
        lost += f", counts {counted:g} of {calls}"
    if took < 0:
        return f"{lost} (it did not stop: its host closed it)"
    return f"{lost} ({took:.1f} s)"


async def main(only: str) -> None:
    print("| shape | " + " | ".join(STOPS) + " |")
    print("|---|" + "---|" * len(STOPS))
    for shape in SHAPES:
        if not shape.startswith(only):
            continue
        cells = [await cell(shape, sig) for sig in STOPS.values()]
        print(f"| {shape} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1] if len(sys.argv) > 1 else "")
