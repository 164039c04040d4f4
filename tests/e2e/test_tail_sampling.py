"""Tail sampling in the real Jaeger v2 collector keeps every failure whole, a fraction of the rest.

The collector runs deploy/jaeger.yaml with deploy/tail-sampling.yaml layered over it, keeping
25% of the other traces and every trace over 1 s. The workload (tail_workload.py) sends 400
ok calls, 10 each of tool_error, server_error, client_error and cancelled, and 4 slow ok
calls, from an instrumented client to an instrumented server, recording every span; metrics
go straight to Prometheus, around the sampler.
"""

from __future__ import annotations

import base64
import json
import math
import os
import subprocess
import sys
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from backends import get, promql, stack
from test_real_backends import base64_or_hex
from workload_session import TESTS, otel_env

from mcpobs import semconv as S
from mcpobs._cli.tail_sampling import KEPT_OUTCOMES

pytestmark = pytest.mark.e2e

HERE = Path(__file__).parent
SERVICE = "mcpobs-e2e-tail"
KEEP_PERCENT = 25
SLOW_MS = 1000
SALT = "default-hash-seed"
"""The probabilistic policy's salt when none is configured (tailsamplingprocessor v0.140)."""


def kept_by_hash(trace_id: str, percent: float) -> bool:
    """The collector's probabilistic policy: FNV-1a 64 of salt + trace id, under a threshold."""
    h = 0xCBF29CE484222325
    for byte in SALT.encode() + bytes.fromhex(trace_id):
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h <= int((2**64 - 1) * percent / 100)


def jaeger_spans(url: str, since: datetime, service: str = SERVICE) -> dict[str, set[str]]:
    """Span ids per trace id, for every trace Jaeger holds with a span of `service` (the workload's)."""
    params = {
        "query.service_name": service,
        "query.start_time_min": (since - timedelta(minutes=1)).isoformat().replace("+00:00", "Z"),
        "query.start_time_max": (datetime.now(UTC) + timedelta(minutes=1)).isoformat().replace("+00:00", "Z"),
        "query.num_traces": "5000",
    }
    status, body = get(f"{url}/api/v3/traces", params, timeout=30)
    if status == 404:
        return {}
    assert status == 200, f"Jaeger answered {status}: {body[:500]!r}"
    found: dict[str, set[str]] = defaultdict(set)
    for resource_spans in json.loads(body)["result"]["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            for span in scope_spans["spans"]:
                found[base64_or_hex(span["traceId"])].add(_span_id(span["spanId"]))
    return found


def _span_id(span_id: str) -> str:
    return span_id.lower() if len(span_id) == 16 else base64.b64decode(span_id).hex()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    workdir = tmp_path_factory.mktemp("tail")
    tail = {
        "MCPOBS_TAIL_KEEP_PERCENT": str(KEEP_PERCENT),
        "MCPOBS_TAIL_SLOW_MS": str(SLOW_MS),
        "MCPOBS_TAIL_DECISION_WAIT": "2s",
    }
    with stack(workdir, layers=("tail-sampling.yaml",), env=tail) as s:
        since = datetime.now(UTC)
        out = workdir / "sent.json"
        env = {**otel_env(s, SERVICE), "PYTHONPATH": os.pathsep.join([str(TESTS), str(HERE)])}
        done = subprocess.run(
            [sys.executable, str(HERE / "tail_workload.py"), str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        sent = json.loads(out.read_text())
        traces: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for span in sent["spans"]:
            traces[span["trace_id"]].append(span)
        failures = {t for t, spans in traces.items() if _kind(spans) not in ("ok", None)}
        deadline = time.monotonic() + 60
        while True:  # every trace the collector keeps lands a decision_wait after its last span
            arrived = jaeger_spans(s.jaeger.url, since)
            if failures <= arrived.keys() or time.monotonic() > deadline:
                break
            time.sleep(1)
        time.sleep(4)  # two decision waits more for the ok traces decided last
        arrived = jaeger_spans(s.jaeger.url, since)
        requests = S.prometheus_name(S.SERVER_REQUESTS)
        expected_requests = sum(sent["sent"].values())

        def counted() -> list[dict[str, Any]]:
            label = S.prometheus_label(S.MCP_METHOD_NAME)
            return promql(s.prometheus.url, f'sum({requests}{{job="{SERVICE}", {label}="tools/call"}})')

        deadline = time.monotonic() + 30
        while not counted() or float(counted()[0]["value"][1]) < expected_requests:
            if time.monotonic() > deadline:
                break
            time.sleep(1)
        result = {"sent": sent, "traces": traces, "arrived": arrived, "prometheus": s.prometheus.url}
        summary = {k: f"{sum(t in arrived for t in ids)}/{len(ids)}" for k, ids in _calls(result).items()}
        print(f"\ntail sampling, traces arrived/sent by kind: {summary}")  # shown with -s; the numbers for the docs
        yield result


def _kind(spans: list[dict[str, Any]]) -> str | None:
    """A call's kind from its SERVER span: its outcome, or `slow`; None for a trace with no call."""
    server = [s for s in spans if s["kind"] == "SERVER" and str(s["name"]).startswith("tools/call")]
    if not server:
        return None
    if server[0]["tool"] == "slow_lookup":
        return "slow"
    return server[0]["outcome"]


def _calls(run: dict[str, Any]) -> dict[str, list[str]]:
    by_kind: dict[str, list[str]] = defaultdict(list)
    for trace_id, spans in run["traces"].items():
        kind = _kind(spans)
        if kind is not None:
            by_kind[kind].append(trace_id)
    return by_kind


def _whole(run: dict[str, Any], trace_id: str) -> bool:
    return run["arrived"].get(trace_id, set()) == {s["span_id"] for s in run["traces"][trace_id]}


def test_the_workload_sent_what_it_meant_to(run):
    calls = _calls(run)
    assert {kind: len(ids) for kind, ids in calls.items()} == run["sent"]["sent"]
    for trace_id in (t for ids in calls.values() for t in ids):
        kinds = Counter(s["kind"] for s in run["traces"][trace_id])
        assert kinds["CLIENT"] >= 1 and kinds["SERVER"] >= 1, run["traces"][trace_id]


@pytest.mark.parametrize("kind", ["tool_error", "server_error", "client_error", "cancelled", "slow"])
def test_every_failed_or_slow_call_arrives_whole(run, kind):
    ids = _calls(run)[kind]
    missing = [t for t in ids if not _whole(run, t)]
    assert not missing, f"{len(missing)} of {len(ids)} {kind} traces did not arrive whole: {missing[:3]}"
    assert all(
        s["outcome"] in {o.value for o in KEPT_OUTCOMES} or kind == "slow"
        for t in ids
        for s in run["traces"][t]
        if s["kind"] == "SERVER"
    )


def test_no_trace_arrives_in_part(run):
    partial = [t for t in run["arrived"] if t in run["traces"] and not _whole(run, t)]
    assert not partial, f"{len(partial)} traces arrived without some of their spans"
    strangers = set(run["arrived"]) - set(run["traces"])
    assert not strangers, "Jaeger holds traces this workload never sent"


def _slow(run: dict[str, Any], trace_id: str) -> bool:
    spans = run["traces"][trace_id]
    return (max(s["end"] for s in spans) - min(s["start"] for s in spans)) / 1e6 >= SLOW_MS


def test_ok_calls_arrive_at_the_set_fraction(run):
    # An ok call that ran slow (a loaded machine) is kept by the latency policy, not the fraction.
    oks = [t for t in _calls(run)["ok"] if not _slow(run, t)]
    kept = [t for t in oks if t in run["arrived"]]
    n, p = len(oks), KEEP_PERCENT / 100
    sd = math.sqrt(n * p * (1 - p))
    # 400 calls at 25%: 100 expected, sd 8.7. Five sd either side fails once in 3.5 million runs.
    low, high = n * p - 5 * sd, n * p + 5 * sd
    assert low <= len(kept) <= high, f"kept {len(kept)} of {n} ok traces, expected {low:.0f}-{high:.0f}"


def test_the_ok_calls_kept_are_exactly_those_the_policies_pick(run):
    """Stronger than a count: the collector's hash of each trace id (or its length) decides, and nothing else.

    An ok call the loaded machine made slow is left out on the side of "not kept": the latency
    policy measures the spans that arrived by its decision time, and on a starved machine the
    client's span can land after it (a decision wait here is 2 s), so either answer is the
    policy's. Kept, it arrives whole (`test_no_trace_arrives_in_part`).
    """
    for trace_id in _calls(run)["ok"]:
        if kept_by_hash(trace_id, KEEP_PERCENT):
            assert trace_id in run["arrived"], f"{trace_id}: the probabilistic policy keeps it"
        elif not _slow(run, trace_id):
            assert trace_id not in run["arrived"], f"{trace_id}: no policy keeps a fast ok call outside the fraction"


def test_metrics_count_every_call_whatever_was_sampled(run):
    outcome, tool = S.prometheus_label(S.OUTCOME), S.prometheus_label(S.GEN_AI_TOOL_NAME)
    method = S.prometheus_label(S.MCP_METHOD_NAME)
    for spec in (S.SERVER_REQUESTS, S.CLIENT_REQUESTS):
        rows = promql(
            run["prometheus"],
            f'sum by ({outcome}) ({S.prometheus_name(spec)}{{job="{SERVICE}", {method}="tools/call"}})',
        )
        counted = {r["metric"][outcome]: round(float(r["value"][1])) for r in rows}
        assert sum(counted.values()) == sum(run["sent"]["sent"].values()), (spec.name, counted)
    rows = promql(
        run["prometheus"],
        f'sum by ({outcome}) ({S.prometheus_name(S.SERVER_REQUESTS)}{{job="{SERVICE}", {method}="tools/call"}})',
    )
    counted = {r["metric"][outcome]: round(float(r["value"][1])) for r in rows}
    sent = run["sent"]["sent"]
    assert counted == {
        "ok": sent["ok"] + sent["slow"],
        "tool_error": sent["tool_error"],
        "server_error": sent["server_error"],
        "client_error": sent["client_error"],
        "cancelled": sent["cancelled"],
    }
    duration = S.prometheus_name(S.SERVER_OPERATION_DURATION)
    (row,) = promql(
        run["prometheus"], f'sum({duration}_count{{job="{SERVICE}", {tool}="get_order_status", {outcome}="ok"}})'
    )
    assert round(float(row["value"][1])) == sent["ok"]
