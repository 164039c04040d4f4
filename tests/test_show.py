"""`python -m mcpobs show`: real Jaeger and Prometheus answers rendered as the demo renders, and its mistakes.

tests/show_answers.json is what a real Jaeger v2 and Prometheus 3 answered the queries `show`
sends, after the demo (every outcome, an instrumented client and server) ran against them;
`tests/e2e/record_show.py` records it again. The command against the live stack, and the
newcomer's walk through the docs, are in tests/e2e (test_show_live.py, test_walkthrough.py).
"""

from __future__ import annotations

import io
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from processes import free_port

from mcpobs import semconv as S
from mcpobs._cli import CommandError, render, show

ANSWERS = json.loads((Path(__file__).resolve().parent / "show_answers.json").read_text())


def shown(traces: list[show.Trace]) -> list[str]:
    out = io.StringIO()
    show.write_traces(traces, out)
    return out.getvalue().splitlines()


def under(lines: list[str], parent: str, child: str) -> bool:
    """Whether a line containing `child` comes right after one containing `parent`, indented deeper."""
    for above, below in itertools.pairwise(lines):
        if parent in above and child in below:
            return len(below) - len(below.lstrip()) > len(above) - len(above.lstrip())
    return False


def test_jaegers_traces_render_as_the_demos_trees_with_client_and_server_joined():
    traces = show.traces_of(ANSWERS["jaeger"])
    lines = shown(traces)
    assert under(lines, "tools/call check_stock             CLIENT", "tools/call check_stock             SERVER")
    (crash,) = [line for line in lines if "tools/call check_stock" in line and " SERVER " in line]
    assert f" {S.Outcome.SERVER_ERROR} " in crash and "boundary=handler" in crash and "type=tool_error" in crash
    for outcome in set(S.Outcome) - {
        S.Outcome.STOPPED
    }:  # `stopped` takes a server stopping mid-call: tests/test_stops.py drives it to a real receiver
        assert any(f" {outcome} " in line for line in lines), outcome
    assert "boundary=discovery" in "\n".join(lines) and "boundary=arguments" in "\n".join(lines)
    progress = [line for line in lines if line.strip().startswith(f"{S.PROGRESS_SPAN} ")]
    assert len(progress) == 5 and all(" INTERNAL " in line for line in progress)
    assert under(lines, "tools/call slow_export             SERVER", f"{S.PROGRESS_SPAN} ")
    assert "message=exported 1/5" in progress[0] and "value=1" in progress[0]
    headers = [line for line in lines if line.startswith("trace ")]
    assert len(headers) == len(traces) and all(f"({ANSWERS['service']})" in h for h in headers)
    starts = [t.start_ns for t in traces]
    assert starts == sorted(starts)  # oldest first, the newest at the bottom


def test_a_span_line_reads_the_same_as_the_demos():
    traces = show.traces_of(ANSWERS["jaeger"])
    (span,) = [
        s
        for t in traces
        for s in t.spans
        if s.name == "tools/call get_order_status"
        and s.kind == "SERVER"
        and s.attributes.get(S.OUTCOME) == S.Outcome.TOOL_ERROR
    ]
    out = io.StringIO()
    render.tree([span], out)
    line = out.getvalue()
    ms = span.duration_ns / 1e6
    assert line == (
        f"  {'tools/call get_order_status':<34} {'SERVER':<8} {ms:8.1f} ms  {'tool_error':<13} "
        f"name=get_order_status boundary=handler type=tool_error\n"
    ), line


def test_failures_keeps_the_traces_with_a_failed_call():
    traces = show.traces_of(ANSWERS["jaeger"])
    failed = [t for t in traces if t.failed]
    outcomes = sorted(str(s.attributes[S.OUTCOME]) for t in failed for s in t.spans if s.kind == "SERVER")
    # the demo's tool error, crash, unknown tool and bad arguments: their SERVER spans and nothing else
    assert outcomes == sorted(
        [S.Outcome.TOOL_ERROR, S.Outcome.SERVER_ERROR, S.Outcome.CLIENT_ERROR, S.Outcome.CLIENT_ERROR]
    )
    kept = {s.name for t in traces if not t.failed for s in t.spans}
    assert "tools/call issue_refund" in kept and "tools/call reindex_catalog" in kept  # pending input, cancelled


def test_prometheus_answers_render_as_the_demos_table():
    answers = []
    for spec in (S.SERVER_REQUESTS, S.SERVER_OPERATION_DURATION, S.CLIENT_REQUESTS, S.CLIENT_OPERATION_DURATION):
        name = S.prometheus_name(spec)
        for suffix, which in (
            (("_count", "count"), ("_sum", "sum")) if spec.instrument == "histogram" else (("", "value"),)
        ):
            answer = ANSWERS["prometheus"][show.metric_query(name + suffix, ANSWERS["service"], "15m")]
            answers.append((spec.name, answer["data"]["result"], which))
    out = io.StringIO()
    render.table(show.metric_rows(answers), out)
    lines = out.getvalue().splitlines()
    for spec in (S.SERVER_REQUESTS, S.SERVER_OPERATION_DURATION, S.CLIENT_REQUESTS):
        assert f"  {spec.name}" in lines
    requests = lines[lines.index(f"  {S.SERVER_REQUESTS.name}") + 1 :]
    assert any(r.split() == ["tools/call", "check_stock", "server_error", "handler", "1"] for r in requests), lines
    durations = lines[lines.index(f"  {S.SERVER_OPERATION_DURATION.name}") + 1 :]
    (slow,) = [r for r in durations if r.split()[:3] == ["tools/call", "slow_export", "ok"]][:1]
    assert "n=1 mean=" in slow and float(slow.split("mean=")[1].split()[0]) >= 100  # five 20 ms steps


def test_since_takes_a_duration_and_refuses_anything_else():
    assert show.seconds("15m") == 900 and show.seconds("30s") == 30 and show.seconds("2h") == 7200
    for bad in ("15", "1w", "-5m", "0m", "fifteen"):
        with pytest.raises(CommandError, match="not a duration"):
            show.seconds(bad)


def test_prometheus_is_found_from_the_variables_the_stack_prints():
    endpoint = "http://127.0.0.1:9191/api/v1/otlp/v1/metrics"
    assert show.prometheus_base({"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": endpoint}) == "http://127.0.0.1:9191"
    assert show.prometheus_base({"PROMETHEUS_LISTEN": "127.0.0.1:9292"}) == "http://127.0.0.1:9292"
    collector = {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://collector:4318/v1/metrics"}
    assert show.prometheus_base(collector) == "http://127.0.0.1:9090"


def mcpobs(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "JAEGER_", "PROMETHEUS_"))}
    return subprocess.run(
        [sys.executable, "-m", "mcpobs", *args], capture_output=True, text=True, env={**clean, **env}, timeout=60
    )


def one_line(run: subprocess.CompletedProcess[str]) -> str:
    assert run.returncode == 2 and run.stdout == "", (run.returncode, run.stdout, run.stderr)
    (line,) = run.stderr.splitlines()
    assert line.startswith("mcpobs show: "), line
    return line


def test_a_jaeger_that_does_not_answer_is_one_line_saying_what_to_do():
    port = free_port()
    line = one_line(mcpobs("show", "--service", "shop", "--jaeger", f"127.0.0.1:{port}"))
    assert f"nothing answers at http://127.0.0.1:{port} (Jaeger's query API" in line
    assert "scripts/stack" in line and "--jaeger" in line
    line = one_line(mcpobs("show", "--service", "shop", JAEGER_QUERY_HTTP=f"127.0.0.1:{port}"))
    assert f"http://127.0.0.1:{port}" in line


def test_mistakes_on_the_command_line_are_one_line():
    assert "no service name" in one_line(mcpobs("show"))
    assert "--since '5 minutes' is not a duration" in one_line(mcpobs("show", "--service", "x", "--since", "5 minutes"))
    assert "--limit 0" in one_line(mcpobs("show", "--service", "x", "--limit", "0"))
