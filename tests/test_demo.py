"""`python -m mcpobs demo`, the README's first command, shows every outcome as a trace tree."""

from __future__ import annotations

import os
import subprocess
import sys

from processes import free_port

from mcpobs import semconv as S


def test_the_demo_prints_a_tree_for_every_outcome():
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    run = subprocess.run([sys.executable, "-m", "mcpobs", "demo"], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    for outcome in set(S.Outcome) - {
        S.Outcome.STOPPED
    }:  # `stopped` takes a server stopping mid-call: tests/test_stops.py drives it to a real receiver
        assert f" {outcome.value} " in out, outcome
    for boundary in ("boundary=handler", "boundary=discovery", "boundary=arguments"):
        assert boundary in out
    assert sum("INTERNAL" in line and line.strip().startswith("progress ") for line in out.splitlines()) == 5
    assert "deliver tools_list_changed" in out and "publish tools_list_changed" in out
    assert "round=2" in out  # the elicitation's second round
    assert S.SERVER_REQUESTS.name in out and S.SERVER_OPERATION_DURATION.name in out
    client_line = next(line for line in out.splitlines() if "tools/call check_stock" in line and "CLIENT" in line)
    server_line = next(line for line in out.splitlines() if "tools/call check_stock" in line and "SERVER" in line)
    assert len(server_line) - len(server_line.lstrip()) > len(client_line) - len(client_line.lstrip())  # nested


def test_the_demo_says_nothing_answers_for_each_signal_and_prints_the_trees_instead():
    port = free_port()  # nothing listens there
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{port}", OTEL_SERVICE_NAME="shop")
    run = subprocess.run([sys.executable, "-m", "mcpobs", "demo"], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    said = lines[lines.index("Nothing was exported:") + 1 : lines.index("so here is what was recorded, in memory.")]
    for signal, variable in (("traces", "TRACES"), ("metrics", "METRICS")):
        (line,) = [line for line in said if line.strip().startswith(f"{signal}:")]
        assert f"not sent: nothing answers at http://127.0.0.1:{port}/v1/{signal}" in line
        assert "from OTEL_EXPORTER_OTLP_ENDPOINT" in line and f"Set OTEL_EXPORTER_OTLP_{variable}_ENDPOINT" in line
    assert "Sent " not in run.stdout and "/api/v3/traces" not in run.stdout  # no claim, no URL to nothing
    assert f" {S.Outcome.TOOL_ERROR.value} " in run.stdout  # the trees, as without an endpoint
    assert "Failed to export" not in run.stderr and "nothing answers" not in run.stderr  # said once, on stdout


def test_the_demo_says_which_signal_is_off():
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    port = free_port()
    env.update(OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=f"http://127.0.0.1:{port}/v1/metrics", OTEL_TRACES_EXPORTER="none")
    run = subprocess.run([sys.executable, "-m", "mcpobs", "demo"], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "  traces:  off (OTEL_TRACES_EXPORTER=none)" in run.stdout.splitlines()
    assert f"metrics: not sent: nothing answers at http://127.0.0.1:{port}/v1/metrics" in run.stdout
