"""What a `multiprocessing` child records, by start method: on 3.14 Linux's default is forkserver.

A `fork` child inherits `instrument()` and exports its own calls under its own
`service.instance.id`; a `forkserver` or `spawn` child is a fresh interpreter that imports the
main module as `__mp_main__`, so an `instrument()` under `if __name__ == "__main__"` is not in it:
it records nothing until it calls `instrument()` itself (docs/compatibility.md, "Python").
"""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
from collections import Counter

import pytest
from exiting import exporting_to
from otlp_receiver import OtlpReceiver

from mcpobs import semconv as S

SERVER = 2  # the OTLP span kind

SCRIPT = """
import multiprocessing
import sys

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer
from opentelemetry import trace

import mcpobs


def calls(n, instrument):
    if instrument:
        mcpobs.instrument()
    server = MCPServer("shop")

    @server.tool()
    def ping() -> str:
        return "pong"

    async def go():
        async with Client(server) as client:
            for _ in range(n):
                await client.call_tool("ping", {})

    anyio.run(go)
    # A multiprocessing child ends with os._exit: no atexit, so no flush at exit; the user flushes.
    getattr(trace.get_tracer_provider(), "force_flush", lambda: None)()


if __name__ == "__main__":
    method, instrument_in_child = sys.argv[1], sys.argv[2] == "yes"
    mcpobs.instrument()
    calls(5, False)
    child = multiprocessing.get_context(method).Process(target=calls, args=(3, instrument_in_child))
    child.start()
    child.join()
    sys.exit(child.exitcode)
"""


def test_linux_s_default_start_method_is_forkserver_from_3_14():
    """The difference docs/compatibility.md describes: 3.11-3.13 fork, 3.14 forkserver."""
    expected = "forkserver" if sys.version_info >= (3, 14) else "fork"
    assert multiprocessing.get_start_method() == expected


@pytest.mark.parametrize(
    ("method", "instrument_in_child", "child_calls"),
    [("fork", False, 3), ("forkserver", False, 0), ("forkserver", True, 3), ("spawn", False, 0), ("spawn", True, 3)],
    ids=[
        "fork inherits",
        "forkserver records nothing",
        "forkserver instruments",
        "spawn records nothing",
        "spawn instruments",
    ],
)
def test_a_multiprocessing_child_records_what_its_start_method_gives_it(
    method, instrument_in_child, child_calls, tmp_path
):
    script = tmp_path / "children.py"
    script.write_text(SCRIPT)
    receiver = OtlpReceiver()
    with receiver.running():
        env = exporting_to(receiver.port)
        argv = [sys.executable, str(script), method, "yes" if instrument_in_child else "no"]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
    per_process = Counter(
        s.instance
        for s in receiver.received_spans
        if s.kind == SERVER and s.attributes.get(S.MCP_METHOD_NAME) == "tools/call"
    )
    expected = [5, child_calls] if child_calls else [5]
    assert sorted(per_process.values(), reverse=True) == expected, per_process
