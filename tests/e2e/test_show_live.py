"""`python -m mcpobs show` against real Jaeger v2 and Prometheus 3, fed by the demo.

The demo runs in a subprocess configured only by the variables scripts/stack prints; `show`
runs as a user runs it, with the same variables plus JAEGER_QUERY_HTTP (scripts/stack's own).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from backends import Stack, stack
from processes import free_port

from mcpobs import semconv as S
from mcpobs._cli import show

pytestmark = pytest.mark.e2e

SERVICE = "mcpobs-show-live"


@dataclass
class Fed:
    backends: Stack
    env: dict[str, str]

    def show(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mcpobs", "show", *args],
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=60,
        )


@pytest.fixture(scope="module")
def fed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fed]:
    with stack(tmp_path_factory.mktemp("show")) as backends:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "JAEGER_", "PROMETHEUS_"))}
        env.update(
            OTEL_SERVICE_NAME=SERVICE,
            OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=backends.otlp_traces,
            OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=backends.otlp_metrics,
            JAEGER_QUERY_HTTP=backends.jaeger.url.removeprefix("http://"),
        )
        demo = subprocess.run(
            [sys.executable, "-m", "mcpobs", "demo"], env=env, capture_output=True, text=True, timeout=180
        )
        assert demo.returncode == 0, demo.stderr
        yield Fed(backends, env)


def until(
    fed: Fed, done: Callable[[subprocess.CompletedProcess[str]], bool], *args: str
) -> subprocess.CompletedProcess[str]:
    """`show` with `args`, again until `done(run)` holds (the demo's last batches may still be on their way)."""
    deadline = time.monotonic() + 60
    while True:
        run = fed.show(*args)
        if done(run):
            return run
        assert time.monotonic() < deadline, (run.returncode, run.stdout, run.stderr)
        time.sleep(0.5)


def test_show_prints_the_demos_traces_joined_and_its_counts(fed: Fed):
    run = until(
        fed,
        lambda r: r.returncode == 0 and "tools/call check_stock" in r.stdout and "  mcpobs.server" in r.stdout,
        "--limit",
        "50",
    )
    lines = run.stdout.splitlines()
    client = next(i for i, line in enumerate(lines) if "tools/call check_stock" in line and " CLIENT " in line)
    server = lines[client + 1]
    assert "tools/call check_stock" in server and " SERVER " in server, lines[client : client + 2]
    assert f" {S.Outcome.SERVER_ERROR} " in server and "boundary=handler" in server
    assert len(server) - len(server.lstrip()) > len(lines[client]) - len(lines[client].lstrip())
    assert sum(line.strip().startswith(f"{S.PROGRESS_SPAN} ") for line in lines) == 5
    for outcome in set(S.Outcome) - {
        S.Outcome.STOPPED
    }:  # `stopped` takes a server stopping mid-call: tests/test_stops.py drives it to a real receiver
        assert any(f" {outcome} " in line for line in lines), outcome
    requests = lines[lines.index(f"  {S.SERVER_REQUESTS.name}") + 1 :]
    assert any(r.split() == ["tools/call", "check_stock", "server_error", "handler", "1"] for r in requests), run.stdout


def test_failures_keeps_the_failed_calls_only(fed: Fed):
    run = until(fed, lambda r: r.returncode == 0 and r.stdout.count("\ntrace ") >= 4, "--failures", "--limit", "50")
    trees, _, table = run.stdout.partition("\nMetrics of")
    assert trees.count("\ntrace ") == 4, trees  # tool error, crash, unknown tool, bad arguments
    assert "tools/call issue_refund" not in trees and "tools/call reindex_catalog" not in trees
    rows = [line.split() for line in table.splitlines() if line.startswith("    ")]
    assert rows and all(row[0] == "tools/call" and row[2] in {str(o) for o in show.FAILED} for row in rows), table


def test_a_service_with_no_traces_says_which_services_jaeger_has(fed: Fed):
    until(fed, lambda r: r.returncode == 0, "--no-metrics")  # the demo's traces are in
    run = fed.show("--service", "no-such-service")
    assert run.returncode == 2 and run.stdout == "", run
    (line,) = run.stderr.splitlines()
    assert line.startswith("mcpobs show: no traces of service 'no-such-service'"), line
    assert SERVICE in line and "OTEL_SERVICE_NAME" in line and "5 s" in line


def test_a_prometheus_that_does_not_answer_is_one_line_and_no_metrics_skips_it(fed: Fed):
    port = free_port()
    run = fed.show("--prometheus", f"127.0.0.1:{port}")
    assert run.returncode == 2 and run.stdout == "", run
    (line,) = run.stderr.splitlines()
    assert f"nothing answers at http://127.0.0.1:{port} (Prometheus" in line and "--no-metrics" in line, line
    skipped = until(fed, lambda r: r.returncode == 0, "--prometheus", f"127.0.0.1:{port}", "--no-metrics")
    assert "tools/call" in skipped.stdout and "Metrics of" not in skipped.stdout
