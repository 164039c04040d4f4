"""The overhead benchmark still runs end to end (a smoke run: nothing here is timed)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "overhead.py"


def test_the_benchmark_runs_every_configuration_beside_its_floor():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--rounds", "1", "--calls", "20", "--only", "auto"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {
        cells[0]: cells[1:]
        for line in done.stdout.splitlines()
        if line.startswith("| ") and (cells := [c.strip() for c in line.strip("|").split("|")])[0] != "config"
    }
    expected = {"bare", "sdk", "mcpobs-server", "floor-server", "mcpobs", "floor-full", "mcpobs-sampled"}
    assert expected | {"floor-sampled", "histograms-only", "floor-payload"} <= rows.keys()
    for config in ("mcpobs-server", "mcpobs", "mcpobs-sampled"):
        assert rows[config][3].startswith("**"), f"{config} has no ratio to its floor: {rows[config]}"
    # each floor emits the spans its configuration does: one SERVER and one CLIENT span per call
    assert rows["floor-full"][4] == rows["floor-payload"][4] == rows["mcpobs"][4] == "2.00"
    # the payload floor carries mcpobs's attributes, so mcpobs is priced against it too
    assert float(rows["mcpobs"][5]) > 0 and rows["floor-full"][5] == "-"
    assert rows["floor-server"][4] == rows["mcpobs-server"][4] == rows["sdk"][4] == "1.00"
    if importlib.util.find_spec("sentry_sdk") is None:
        assert "sentry: sentry-sdk is not installed" in done.stdout
    else:  # the peer row: Sentry's integration made a transaction per call
        assert rows["sentry"][4] == "1.00"
    # FastMCP: its own telemetry, mcpobs on it, and their floor (FastMCP's spans + the duration records)
    assert {"fastmcp-bare", "fastmcp-native", "fastmcp-floor", "fastmcp-mcpobs"} <= rows.keys()
    assert rows["fastmcp-mcpobs"][3].startswith("**"), rows["fastmcp-mcpobs"]
    assert rows["fastmcp-mcpobs"][4] == "2.00"  # one SERVER and one CLIENT span, mcpobs's; FastMCP's suppressed
    assert rows["fastmcp-native"][4] == rows["fastmcp-floor"][4] == "3.00"  # FastMCP's two + the SDK's `MCP send`
    assert "Python 3." in done.stdout and "mcp 2." in done.stdout  # the machine and versions are named


def test_the_privacy_step_benchmark_runs_each_text_beside_its_baseline():
    script = SCRIPT.parent / "privacy_step.py"
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and not line.startswith("| text")]
    assert len(rows) == 4, done.stdout
    for row in rows:
        ratio = row.strip("|").split("|")[-1].strip()
        assert float(ratio) > 0, row
