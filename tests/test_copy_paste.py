"""docs/production.md's "Copy and paste": each command line runs each app module and serves a call.

The modules and command lines are read from the page itself, so what a reader copies is what
runs: each module is written to a directory, each command line is started there with the
venv's binary, as written but for the port (a free one), the address (127.0.0.1: loopback
only) and two workers, exporting to an OTLP receiver on loopback. One `tools/call` through the
SDK's `Client` must answer, and its SERVER span must arrive from the worker that served it
(so `instrument()` ran in that worker, forked or not).
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import sys
import time
from itertools import pairwise
from pathlib import Path

import anyio
import pytest
from exiting import exporting_to
from mcp import Client
from otlp_receiver import OtlpReceiver
from processes import free_port, start, wait_for_http

from mcpobs import semconv as S

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SERVER_KIND = 2  # the OTLP span kind


def section() -> str:
    text = (ROOT / "docs" / "production.md").read_text()
    start_at = text.index("\n## Copy and paste\n")
    end_at = text.index("\n## ", start_at + 1)
    return text[start_at:end_at]


def modules() -> dict[str, str]:
    """The page's app modules, by the file name it gives each (`app.py`, `fastmcp_app.py`)."""
    found = dict(re.findall(r"`(\w+\.py)`[^\n]*:\n\n```python\n(.*?)```", section(), re.S))
    assert set(found) == {"app.py", "fastmcp_app.py"}, sorted(found)
    return found


def command_lines() -> list[list[str]]:
    (block,) = re.findall(r"```bash\n(.*?)```", section(), re.S)
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]


LINES = command_lines()


def on_loopback(words: list[str], port: int, module: str) -> list[str]:
    """The line as written, but bound to 127.0.0.1:`port`, two workers, the module named."""
    out: list[str] = [str(BIN / words[0])]
    changed = 0
    for before, word in pairwise(words):
        if word == "app:app":
            word = f"{module}:app"
        elif word == "0.0.0.0:8000":
            word, changed = f"127.0.0.1:{port}", changed + 1
        elif word == "0.0.0.0":
            word = "127.0.0.1"
        elif word == "8000" and before == "--port":
            word, changed = str(port), changed + 1
        elif before in ("-w", "--workers"):
            word = "2"  # the page says 4; two cores here
        out.append(word)
    assert changed == 1, f"no port 8000 to replace in {words}"
    return out


async def one_call(url: str) -> str:
    async with Client(url) as client:
        result = await client.call_tool("get_order_status", {"order_id": "O-1873"})
    assert not result.is_error, result
    return result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("module", ["app", "fastmcp_app"])
@pytest.mark.parametrize("words", LINES, ids=[" ".join(w[:1] + w[2:]) for w in LINES])
def test_each_line_serves_each_module_and_its_worker_exports(words, module, tmp_path):
    for name, code in modules().items():
        (tmp_path / name).write_text(code)
    port = free_port()
    command = on_loopback(words, port, module)
    receiver = OtlpReceiver()
    log = tmp_path / "server.log"
    with receiver.running():
        env = exporting_to(receiver.port, OTEL_SERVICE_NAME="shop", OTEL_BSP_SCHEDULE_DELAY="100")
        with log.open("w") as out:
            process = start(command, cwd=tmp_path, env=env, stdout=out, stderr=out)
        try:
            wait_for_http(port, process, " ".join(command))
            assert anyio.run(one_call, f"http://127.0.0.1:{port}/mcp") == "delivered"
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                with receiver.lock:
                    served = [
                        s
                        for s in receiver.received_spans
                        if s.kind == SERVER_KIND and s.attributes.get(S.MCP_METHOD_NAME) == "tools/call"
                    ]
                if served:
                    break
                time.sleep(0.1)
        finally:  # what was to arrive has: no need to wait for the workers' own stop
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert len(served) == 1, f"{' '.join(command)}: no tools/call SERVER span arrived\n{log.read_text()[-3000:]}"
    assert served[0].name == "tools/call get_order_status"
