"""`contract snapshot` and `replay` list a candidate `module:attribute` without running it or exporting its telemetry.

The candidates are modules written the way our docs wrote servers (an `mcpobs.instrument()` at the
top, `mcp.run(...)` at module level), run by `python -m mcpobs` in a subprocess whose OTEL_*
variables point at a real OTLP receiver on loopback, under production's service name: the command
answers within its budget, and the receiver gets nothing.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from otlp_receiver import OtlpReceiver

from mcpobs import semconv as S

# docs/getting-started.md's server as it was written before it was made importable: it serves
# when imported.
SERVES_WHEN_IMPORTED = '''import mcpobs
from mcp.server.mcpserver import MCPServer

mcpobs.instrument()  # first: servers and clients built afterwards are instrumented

mcp = MCPServer("shop", version="1.0.0")


@mcp.tool()
def get_order_status(order_id: str) -> str:
    """One order's status."""
    return {"O-1873": "delivered"}.get(order_id, "unknown")


mcp.run("streamable-http")  # http://127.0.0.1:8000/mcp
'''
IMPORTABLE = SERVES_WHEN_IMPORTED.replace(
    '\nmcp.run("streamable-http")', '\nif __name__ == "__main__":\n    mcp.run("streamable-http")'
)
BUDGET_S = 30.0  # the whole command, interpreter start-up included, on a loaded 2-core machine


def production_env(receiver: OtlpReceiver) -> dict[str, str]:
    """What a CI job deploying the shop has set: production's service name and collector (here, the receiver)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return env | {
        "OTEL_SERVICE_NAME": "shop",
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{receiver.port}",
        "OTEL_METRIC_EXPORT_INTERVAL": "100",
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }


def traces_file(tmp_path: Path) -> Path:
    """One recorded call of get_order_status (its argument shape), as a collector's file exporter writes it."""
    attributes = {
        S.GEN_AI_TOOL_NAME: "get_order_status",
        S.TOOL_SCHEMA_FINGERPRINT: "0123456789abcdef",
        S.TOOL_ARGUMENTS_SHAPE_ID: "fedcba9876543210",
        S.TOOL_ARGUMENTS_SHAPE_DEFINITION: json.dumps({"{}": {"order_id": "string"}}),
    }
    span = {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": "eee19b7ec3c1b174",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()],
    }
    path = tmp_path / "traces.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n")
    return path


def mcpobs(tmp_path: Path, env: dict[str, str], *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mcpobs", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=BUDGET_S * 2,
    )
    return done, time.monotonic() - began


def test_a_server_that_serves_when_imported_is_listed_not_served_and_exports_nothing(tmp_path: Path):
    (tmp_path / "server.py").write_text(SERVES_WHEN_IMPORTED)
    with OtlpReceiver().running() as receiver:
        env = production_env(receiver)
        snap, snap_s = mcpobs(tmp_path, env, "contract", "snapshot", "server:mcp")
        replay, replay_s = mcpobs(
            tmp_path, env, "contract", "replay", "server:mcp", "--from", str(traces_file(tmp_path))
        )
        time.sleep(0.5)  # anything exported at exit has arrived
    assert snap.returncode == 0 and [t["name"] for t in json.loads(snap.stdout)["tools"]] == ["get_order_status"]
    (note,) = snap.stderr.splitlines()
    assert note == (
        'mcpobs: note: server starts serving when imported, at server.py:15 (mcp.run("streamable-http")): it was '
        'not run (the server it had built was listed). Put that call under `if __name__ == "__main__":` so the '
        "module can be imported."
    )
    assert replay.returncode == 0 and "0 would fail" in replay.stdout, replay.stdout + replay.stderr
    assert snap_s < BUDGET_S and replay_s < BUDGET_S, (snap_s, replay_s)
    assert receiver.bodies == [], (receiver.spans, receiver.metric_names)


def test_an_importable_server_exports_nothing_while_it_is_listed(tmp_path: Path):
    """Before, the candidate was imported in the command's process: its server/discover and tools/list spans
    (and a metrics export) went to the production collector as the service `shop`."""
    (tmp_path / "server.py").write_text(IMPORTABLE)
    with OtlpReceiver().running() as receiver:
        done, _ = mcpobs(tmp_path, production_env(receiver), "contract", "snapshot", "server:mcp")
        time.sleep(0.5)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert receiver.bodies == [], ([s.name for s in receiver.received_spans], receiver.metric_names)


def in_process(*argv: str) -> tuple[int, str]:
    from mcpobs.__main__ import main

    err, path = io.StringIO(), list(sys.path)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            status = main(list(argv))
    finally:
        sys.path[:] = path
    return status, err.getvalue()


def test_a_module_that_blocks_when_imported_is_stopped_within_the_budget(tmp_path, monkeypatch):
    """A serve loop `anyio.run` does not see (a plain socket, here) meets the budget: the child and what it
    started are stopped, and one line says what to do."""
    (tmp_path / "blocking.py").write_text(
        "import os, socket, subprocess, sys\n"
        "helper = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "open('pids', 'w').write(f'{os.getpid()} {helper.pid}')\n"
        "server = socket.create_server(('127.0.0.1', 0))\n"
        "server.accept()\n"
    )
    from mcpobs._cli import candidate

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(candidate, "BUDGET_S", 10.0)
    began = time.monotonic()
    status, err = in_process("contract", "snapshot", "blocking:mcp")
    assert status == 2 and time.monotonic() - began < 30, err
    (line,) = err.splitlines()
    assert line == (
        "mcpobs contract snapshot: blocking:mcp: importing it and listing its tools took more than 10 s (in a child "
        "process, telemetry off): does its module serve or wait when imported? Put that under "
        '`if __name__ == "__main__":`'
    )
    for pid in map(int, (tmp_path / "pids").read_text().split()):
        assert not running(pid), pid


def running(pid: int) -> bool:
    """Whether `pid` runs (a zombie no parent has reaped yet does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize(
    ("module", "says"),
    [
        (
            "from mcp.server.mcpserver import MCPServer\napp = MCPServer('shop')\napp.run('stdio')\nmcp = app\n",
            "server:mcp: its module starts serving when imported, at server.py:3 (app.run('stdio')), before mcp can "
            'be listed: put that call under `if __name__ == "__main__":`',
        ),
        ("import sys\nsys.exit('no configuration')\n", "server:mcp: importing it failed: SystemExit: no configuration"),
        (
            "raise RuntimeError('DATABASE_URL is not set')\n",
            "importing or building the server failed: RuntimeError: DATABASE_URL is not set",
        ),
        ("x = 1\n", "server:mcp: module 'server' has no 'mcp'"),
    ],
)
def test_a_module_that_cannot_be_listed_is_one_line(tmp_path, monkeypatch, module, says):
    (tmp_path / "server.py").write_text(module)
    monkeypatch.chdir(tmp_path)
    status, err = in_process("contract", "snapshot", "server:mcp")
    (line,) = err.splitlines()
    assert status == 2 and says in line, line
