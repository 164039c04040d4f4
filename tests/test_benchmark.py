"""The overhead benchmark still runs end to end (a smoke run: nothing here is timed)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "overhead.py"


def _overhead():
    spec = importlib.util.spec_from_file_location("overhead", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_mcpobs_floor_records_the_same_telemetry_as_mcpobs(mode):
    """`floor-payload` is mcpobs's floor: every metric mcpobs records on the trivial call, with
    the same labels, and every attribute its two spans carry (a floor short of one is cheaper
    than the same telemetry, and the ratio to it would flatter nothing but mislead)."""
    overhead = _overhead()
    overhead.describe(mode)

    def recorded(config):
        done = subprocess.run(
            [*overhead._command(config, mode, 5), "--describe-spans"],
            capture_output=True,
            text=True,
            env=overhead._env(mode),
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return overhead._result(done.stderr)

    def calls(result):  # metric name -> the label sets the measured calls recorded
        return {
            name: sorted(json.dumps(p, sort_keys=True) for p in points) for name, points in result["metrics"].items()
        }

    mcpobs, floor = recorded("mcpobs"), recorded("floor-payload")
    assert {"mcpobs.server.requests", "mcpobs.client.requests"} <= calls(mcpobs).keys()
    assert calls(mcpobs) == calls(floor)
    for kind in ("SERVER", "CLIENT"):
        assert mcpobs["attributes"][kind].keys() <= floor["attributes"][kind].keys(), kind


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
    # mcpobs's floor is the same telemetry (floor-payload); floor-full, what the conventions require, stands beside it
    assert float(rows["mcpobs"][5]) > 0 and rows["floor-full"][5] == rows["floor-payload"][5] == "-"
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
