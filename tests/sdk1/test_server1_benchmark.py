"""benchmarks/overhead1.py (the 1.x server's cost per call) runs, and its floor records what mcpobs records."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import benchmark_script
import pytest

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "overhead1.py"


@pytest.mark.parametrize("mode", ["memory", "http"])
def test_the_floor_records_the_same_telemetry_as_mcpobs(mode):
    """`floor-payload` moves exactly the metric points mcpobs moves on the trivial call, and its span
    carries every attribute mcpobs's does: a floor short of one would flatter the ratio."""
    bench = benchmark_script.load("overhead1")
    bench.describe(mode)

    def recorded(config):
        done = subprocess.run(
            [*bench._command(config, mode, 5), "--describe-spans"],
            capture_output=True,
            text=True,
            env=bench._env(mode),
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads([line for line in done.stderr.splitlines() if line.startswith("{")][-1])

    def points(result):
        return {name: sorted(json.dumps(p, sort_keys=True) for p in found) for name, found in result["metrics"].items()}

    mcpobs, floor = recorded("mcpobs-server"), recorded("floor-payload")
    assert {"mcpobs.server.requests", "mcp.server.operation.duration"} == points(mcpobs).keys()
    assert points(mcpobs) == points(floor)
    assert mcpobs["attributes"].keys() <= floor["attributes"].keys()
    assert mcpobs["spans_per_call"] == floor["spans_per_call"] == 1


def test_the_benchmark_runs_every_configuration():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--rounds", "1", "--calls", "20", "--only", "memory"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and not line.startswith("| config")]
    assert [row.split(" | ")[0].strip("| ") for row in rows] == [
        "bare",
        "floor-server",
        "floor-payload",
        "mcpobs-server",
    ]
