"""The overhead benchmark still runs end to end (a smoke run: nothing here is timed)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import benchmark_script
import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "overhead.py"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_mcpobs_floor_records_the_same_telemetry_as_mcpobs(mode):
    """`floor-payload` is mcpobs's floor: every metric mcpobs records on the trivial call, with
    the same labels, and every attribute its two spans carry (a floor short of one is cheaper
    than the same telemetry, and the ratio to it would flatter nothing but mislead)."""
    overhead = benchmark_script.load("overhead")
    from harness.workers import result  # benchmarks/ is on sys.path once a script is loaded

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
        return result(done.stderr)

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
    expected = {"bare", "sdk", "mcpobs-server", "floor-server", "mcpobs", "mcpobs-lean", "floor-full", "mcpobs-sampled"}
    assert expected | {"floor-sampled", "histograms-only", "floor-payload"} <= rows.keys()
    for config in ("mcpobs-server", "mcpobs", "mcpobs-sampled"):
        assert rows[config][3].startswith("**"), f"{config} has no ratio to its floor: {rows[config]}"
    # each floor emits the spans its configuration does: one SERVER and one CLIENT span per call
    assert rows["floor-full"][4] == rows["floor-payload"][4] == rows["mcpobs"][4] == "2.00"
    # mcpobs's floor is the same telemetry (floor-payload); floor-full, what the conventions require, stands beside it
    assert float(rows["mcpobs"][5]) > 0 and rows["floor-full"][5] == rows["floor-payload"][5] == "-"
    assert float(rows["mcpobs-lean"][5]) > 0 and rows["mcpobs-lean"][4] == "2.00"
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
    assert len(rows) == 8, done.stdout  # four texts, the two copies, the boundary's two paths
    for row in rows:
        ratio = row.strip("|").split("|")[-1].strip()
        assert float(ratio) > 0, row


def test_the_task_telemetry_benchmark_runs_each_part_beside_it_written_by_hand():
    script = SCRIPT.parent / "task_telemetry.py"
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and not line.startswith("| a task")]
    assert len(rows) == 2, done.stdout  # the submission, the leg that ends the task
    for row in rows:
        assert float(row.strip("|").split("|")[-1].strip()) > 0, row


def test_the_growth_curves_run_every_curve_with_a_floor_that_records_what_mcpobs_records(tmp_path):
    """A smoke run of benchmarks/growth.py (tiny points, timed, no valgrind).

    The honest part: the floor must emit the telemetry mcpobs emits (span names and attribute
    keys, metric names and label keys, as many of each), or its ratios mean nothing.
    """
    import json
    import xml.etree.ElementTree as ET

    script = SCRIPT.parent / "growth.py"
    out, images = tmp_path / "growth.json", tmp_path / "images"
    done = subprocess.run(
        [sys.executable, str(script), "--quick", "--capture", "--json", str(out), "--images", str(images)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(out.read_text())
    curves = {"tools", "schema", "payload", "progress", "sessions", "listing", "listing-changed", "distinct"}
    assert set(data["curves"]) == curves
    for name, configs in data["curves"].items():
        assert set(configs) == {"sdk", "floor", "mcpobs"}, name
        for config, result in configs.items():
            assert len(result["points"]) == 2 and all(p["cpu_us"] > 0 for p in result["points"]), (name, config)
        for n, (floor, ours) in enumerate(zip(configs["floor"]["points"], configs["mcpobs"]["points"], strict=True)):
            where = f"{name}, point {n}"
            assert floor["span_count"] == ours["span_count"], where
            assert floor["spans"] == ours["spans"], where  # (kind, name, attribute keys) of every span
            assert [m[:3] for m in floor["metrics"]] == [m[:3] for m in ours["metrics"]], (
                where
            )  # name, kind, label keys
            assert [m[3] for m in floor["metrics"]] == [m[3] for m in ours["metrics"]], where  # records made
            assert ours["metrics"], where
        sdk = configs["sdk"]["points"][-1]
        assert sdk["metrics"] == [] and sdk["span_count"] < configs["mcpobs"]["points"][-1]["span_count"], name
    # the progress curve's second point reports: the floor's `progress` spans and counts are there
    progress = data["curves"]["progress"]["floor"]["points"][-1]
    assert any(kind == "INTERNAL" and span == "progress" for kind, span, _ in progress["spans"])
    for name in curves:
        svg = ET.parse(images / f"growth-{name}.svg").getroot()
        lines = svg.findall("{http://www.w3.org/2000/svg}polyline")
        assert len(lines) == 4, name  # the axes and one line per configuration
        assert "sdk" in ET.tostring(svg, encoding="unicode") and name in done.stdout
    assert "## Growth curves" in done.stdout and "Python 3." in done.stdout


@pytest.mark.slow  # seven configurations, each a fresh server and load process: about a minute
def test_the_saturation_benchmark_measures_every_configuration_and_writes_its_docs(tmp_path):
    """A smoke run of benchmarks/saturation.py (one mode, a second per configuration), then its
    docs written into a copy of README.md and docs/benchmarks.md from the saved JSON.

    Nothing is timed: what can fail is a configuration that made no calls, an instrumented one
    whose telemetry never reached the receiver, or a bare one whose did.
    """
    import xml.etree.ElementTree as ET

    root = SCRIPT.parent.parent
    script = SCRIPT.parent / "saturation.py"
    (tmp_path / "docs").mkdir()
    for name in ("README.md", "docs/benchmarks.md"):
        (tmp_path / name).write_text((root / name).read_text())
    saved = tmp_path / "benchmarks" / "results" / "saturation.json"
    run = [sys.executable, str(script), "--modes", "http-legacy", "--clients", "3", "--seconds", "1", "--warm", "0.5"]
    done = subprocess.run([*run, "--json", str(saved)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(saved.read_text())
    assert {"machine", "clients", "seconds", "rounds", "metric_interval_s", "run_seconds", "runs"} <= data.keys()
    runs = data["runs"]["http-legacy"]
    assert list(runs) == ["bare", "sdk-server", "floor-server", "mcpobs-server", "mcpobs-server-lean", "sdk", "mcpobs"]
    for config, (raw,) in runs.items():
        assert raw["calls"] > 0 and raw["server_cpu"] > 0 and raw["client_cpu"] > 0, config
        # the event loop's thread, within the process: the kernel rounds a thread's and the process's
        # times to clock ticks separately, so the part can read a tick or two above the whole
        tick = 1 / os.sysconf("SC_CLK_TCK")
        assert 0 < raw["server_main_cpu"] <= raw["server_cpu"] + 2 * tick, config
        sent = {key: tally["bytes"] for key, tally in raw["received"].items() if tally["bytes"]}
        expected = {
            "bare": set(),
            "sdk-server": {"traces server"},
            "floor-server": {"traces server", "metrics server"},  # the duration record, exported
            "mcpobs-server": {"traces server", "metrics server"},
            "mcpobs-server-lean": {"traces server", "metrics server"},
            "sdk": {"traces server", "traces client"},  # the SDK's `MCP send` span, in legacy mode
            "mcpobs": {"traces server", "metrics server", "traces client", "metrics client"},
        }[config]
        assert set(sent) == expected, (config, sent)
        for key in expected - {"metrics server", "metrics client"}:  # one span per call per side, none lost
            assert raw["received"][key]["call_items"] == raw["all_calls"], (config, key, raw)
            assert raw["received"][key]["fail_items"] == 3, (config, key, raw)  # one failing call per caller
    assert "mcpobs-server / sdk-server: throughput" in done.stdout
    assert "mcpobs-server / floor-server: server CPU per call" in done.stdout
    lean, full = (runs[c][0]["received"]["traces server"] for c in ("mcpobs-server-lean", "mcpobs-server"))
    assert lean["call_bytes"] / lean["call_items"] < full["call_bytes"] / full["call_items"]  # the groups left off

    again = subprocess.run(
        [sys.executable, str(script), "--from-json", str(saved), "--write-docs", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stderr[-2000:]
    readme, docs = (tmp_path / "README.md").read_text(), (tmp_path / "docs" / "benchmarks.md").read_text()
    assert "`instrument(clients=False)` / the SDK's tracing: throughput" in readme
    assert "## Throughput at saturation" in docs and "### http-legacy" in docs
    assert docs.index("saturation:begin") < docs.index("## Throughput at saturation") < docs.index("saturation:end")
    svg = ET.parse(tmp_path / "docs" / "images" / "saturation.svg").getroot()
    assert len(svg.findall("{http://www.w3.org/2000/svg}rect")) == 1 + 7 + 7  # background, bars, legend
