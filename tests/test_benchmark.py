"""The overhead benchmark still runs end to end (a smoke run: nothing here is timed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "overhead.py"


def test_the_benchmark_runs_every_configuration_and_its_floors():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--rounds", "1", "--calls", "20", "--only", "memory"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {line.split()[0] for line in done.stdout.splitlines() if line.startswith("  ") and line.split()}
    expected = {"bare", "sdk", "mcpobs-server", "mcpobs", "mcpobs-sampled", "sdk+histogram", "bare+histograms"}
    assert expected <= rows
    assert "mcpobs-server / sdk+histogram:" in done.stdout
