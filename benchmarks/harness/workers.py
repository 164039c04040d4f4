"""Fresh processes: a worker per configuration and its one JSON line; the test suite's helpers.

Instrumentation is process-wide, so every configuration runs in a process of its own and
answers with one JSON line on stderr (stdout belongs to the MCP transport in some of them).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[2] / "tests"


def result(stderr: str) -> dict[str, Any]:
    """The worker's answer: the last line of its stderr that is a JSON object."""
    return json.loads([line for line in stderr.splitlines() if line.startswith("{")][-1])


def clean_env(prefixes: tuple[str, ...] = ("OTEL_", "SENTRY_")) -> dict[str, str]:
    """This environment less the variables that would configure a worker's telemetry behind its back."""
    return {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}


def run_worker(cmd: list[str], env: dict[str, str], what: str) -> dict[str, Any]:
    """Runs one worker to its end: its JSON answer, or a RuntimeError with the end of its stderr."""
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{done.stderr[-3000:]}")
    return result(done.stderr)


def test_helpers() -> None:
    """Puts tests/ on sys.path: its loopback server (`transports.serve_http`), ports and process waits
    (`processes.free_port`, `processes.wait_for_port`), shared with the suite rather than copied."""
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
