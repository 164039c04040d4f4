"""Beyond one collector: routing by trace id keeps every trace whole across two tail samplers.

Two Jaeger v2 processes run deploy/jaeger.yaml with deploy/tail-sampling.yaml (keep 10% of the
ok traces by trace-id hash). An instrumented server and an instrumented client run as separate
OS processes, so each trace's CLIENT span and SERVER span are exported by different processes.

- Two tiers: both processes export to the routing collector (deploy/routing.yaml, built by
  scripts/build-backends), whose `loadbalancing` exporter sends each trace to one sampler.
  1,000 calls: 800 ok, 50 each failing on the server (`tool_error`, `server_error`), failing on
  the client only (`output_validation`: the server's reply breaks the schema it lists) and
  cancelled by the client.
- One tier, the counterexample docs/production.md warns about: the server exports to one
  sampler, the client to the other. 100 calls, 20 failing.

Every process writes the spans it ended (routing_workload.py); the test compares them, trace by
trace, with what each Jaeger holds, and prints the table docs/production.md quotes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from backends import Backend, collector_binary, get, jaeger, run
from processes import free_port, start, stop
from test_tail_sampling import jaeger_spans, kept_by_hash
from workload_session import TESTS

from mcpobs._cli.tail_sampling import KEPT_OUTCOMES

pytestmark = pytest.mark.e2e

HERE = Path(__file__).parent
DEPLOY = HERE.parents[1] / "deploy"
KEEP_PERCENT = 10  # deploy/tail-sampling.yaml's default
DECISION_WAIT_S = 5
"""Longer than the gap between a trace's two halves reaching a sampler (each process's batch
delay, 200 ms here, plus scheduling on a loaded machine): a sampler deciding on the first half
alone drops a trace only the second half flags, and its decision cache drops that half too."""
TWO_TIER = {"ok": 800, "tool_error": 50, "server_error": 50, "output_validation": 50, "cancelled": 50}
ONE_TIER = {"ok": 80, "tool_error": 5, "server_error": 5, "output_validation": 5, "cancelled": 5}
SERVER_FLAGGED = ("tool_error", "server_error", "cancelled")
KEPT = {o.value for o in KEPT_OUTCOMES}
KIND = {
    ("get_order_status", "ok"): "ok",
    ("get_order_status", "tool_error"): "tool_error",
    ("quote_refund", "server_error"): "server_error",  # the server's verdict: the client agrees
    ("invoice_total", "server_error"): "output_validation",
    ("wait_for_stock", "cancelled"): "cancelled",
}
"""A call's kind from its CLIENT span's tool and outcome (routing_workload.CALL)."""


@dataclass
class Workload:
    """One topology's run: what the two processes sent, and what each sampler kept."""

    services: tuple[str, str]
    calls: dict[str, int]
    sent: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    """trace id -> span id -> span, as the processes wrote them."""
    arrived: list[dict[str, set[str]]] = field(default_factory=list)
    """Per sampler: trace id -> span ids it holds."""

    def kind(self, trace_id: str) -> str | None:
        for span in self.sent[trace_id].values():
            if span["kind"] == "CLIENT" and str(span["name"]).startswith("tools/call"):
                return KIND[(span["tool"], span["outcome"])]
        return None  # a trace with no call (the client's discovery)

    def by_kind(self) -> dict[str | None, list[str]]:
        found: dict[str | None, list[str]] = defaultdict(list)
        for trace_id in self.sent:
            found[self.kind(trace_id)].append(trace_id)
        return found

    def holders(self, trace_id: str) -> list[int]:
        return [i for i, held in enumerate(self.arrived) if trace_id in held]

    def whole_in(self, trace_id: str, sampler: int) -> bool:
        return self.arrived[sampler].get(trace_id, set()) == set(self.sent[trace_id])

    def whole_in_one(self, trace_id: str) -> bool:
        """Every span of the trace in one sampler, and none of them in another."""
        holders = self.holders(trace_id)
        return len(holders) == 1 and self.whole_in(trace_id, holders[0])

    def table(self) -> dict[str, str]:
        """Per kind: traces kept whole in one sampler, kept in part (split or half dropped), of those sent."""
        rows = {}
        for kind, ids in sorted(self.by_kind().items(), key=lambda kv: str(kv[0])):
            whole = sum(self.whole_in_one(t) for t in ids)
            part = sum(bool(self.holders(t)) and not self.whole_in_one(t) for t in ids)
            rows[str(kind)] = f"{whole} whole, {part} in part, of {len(ids)}"
        return rows


def sampler_spans(url: str, services: tuple[str, str], since: datetime) -> dict[str, set[str]]:
    """Span ids per trace id, for every trace a Jaeger holds with a span of either service."""
    found: dict[str, set[str]] = defaultdict(set)
    for service in services:
        for trace_id, span_ids in jaeger_spans(url, since, service).items():
            found[trace_id] |= span_ids
    return found


def app_env(service: str, traces_to: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return {
        **env,
        "PYTHONPATH": os.pathsep.join([str(TESTS), str(HERE)]),
        "OTEL_SERVICE_NAME": service,
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": traces_to,
        "OTEL_METRICS_EXPORTER": "none",  # metrics need no routing (test_tail_sampling.py covers them)
        "OTEL_BSP_SCHEDULE_DELAY": "200",
    }


@contextmanager
def router(workdir: Path, samplers: list[str]) -> Iterator[tuple[Backend, str]]:
    """The routing collector on free ports in front of `samplers` (OTLP/gRPC addresses)."""
    ports = {k: free_port() for k in ("grpc", "http", "metrics")}
    env = {
        "MCPOBS_SAMPLERS": json.dumps(samplers),
        "MCPOBS_ROUTER_OTLP_GRPC": f"127.0.0.1:{ports['grpc']}",
        "MCPOBS_ROUTER_OTLP_HTTP": f"127.0.0.1:{ports['http']}",
        "MCPOBS_ROUTER_METRICS_HOST": "127.0.0.1",
        "MCPOBS_ROUTER_METRICS_PORT": str(ports["metrics"]),
    }
    cmd = [str(collector_binary()), "--config", str(DEPLOY / "routing.yaml")]
    metrics = f"http://127.0.0.1:{ports['metrics']}/metrics"
    with run("router", cmd, metrics, metrics, workdir, env) as backend:
        yield backend, f"http://127.0.0.1:{ports['http']}/v1/traces"


def read_spans(*paths: Path) -> dict[str, dict[str, dict[str, Any]]]:
    sent: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for path in paths:
        for line in path.read_text().splitlines():
            span = json.loads(line)
            sent[span["trace_id"]][span["span_id"]] = span
    return dict(sent)


def served_calls(path: Path) -> int:
    if not path.exists():
        return 0
    return sum('"SERVER"' in line and '"tools/call' in line for line in path.read_text().splitlines())


def drive(workdir: Path, name: str, workload: Workload, server_to: str, client_to: str) -> None:
    """Serve the shop in one process and run the client's day in another; fill `workload.sent`."""
    server_spans, client_spans = workdir / f"{name}-server.jsonl", workdir / f"{name}-client.jsonl"
    calls = workdir / f"{name}-calls.json"
    calls.write_text(json.dumps(workload.calls))
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    script = str(HERE / "routing_workload.py")
    log = workdir / f"{name}-server.log"
    with log.open("wb") as out:
        server = start(
            [sys.executable, script, "serve", str(port), str(server_spans)],
            env=app_env(workload.services[0], server_to),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while get(url, timeout=1)[0] == 0:
            assert server.poll() is None and time.monotonic() < deadline, f"server did not start:\n{log.read_text()}"
            time.sleep(0.2)
        client = subprocess.run(
            [sys.executable, script, "call", url, str(client_spans), str(calls)],
            env=app_env(workload.services[1], client_to),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert client.returncode == 0, client.stdout + client.stderr
        deadline = time.monotonic() + 60  # a cancelled call's server span ends when the server notices
        while served_calls(server_spans) < sum(workload.calls.values()) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        stop(server, grace=30)  # uvicorn stops on SIGTERM; mcpobs flushes the batch before the process exits
    workload.sent = read_spans(server_spans, client_spans)


def flagged(workload: Workload, trace_id: str) -> bool:
    """Whether deploy/tail-sampling.yaml's policies keep the trace for what a span of it says."""
    return any(
        span["outcome"] in KEPT or span["status"] == "ERROR" or span["schema_stale"] is True
        for span in workload.sent[trace_id].values()
    )


def expected_in_two_tiers(workload: Workload) -> set[str]:
    return {t for t in workload.sent if flagged(workload, t) or kept_by_hash(t, KEEP_PERCENT)}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Workload]]:
    workdir = tmp_path_factory.mktemp("routing")
    tail = {
        "MCPOBS_TAIL_KEEP_PERCENT": str(KEEP_PERCENT),
        "MCPOBS_TAIL_SLOW_MS": "600000",  # no call is slow here: the fraction is the hash's alone
        "MCPOBS_TAIL_DECISION_WAIT": f"{DECISION_WAIT_S}s",
    }
    began = time.monotonic()
    with ExitStack() as stack:
        samplers = []
        for name in ("sampler-1", "sampler-2"):
            ports = {k: free_port() for k in ("otlp_http", "otlp_grpc", "query", "query_grpc", "health")}
            backend = stack.enter_context(jaeger(workdir, ports, name=name, layers=("tail-sampling.yaml",), env=tail))
            samplers.append((backend, ports))
        _, routed = stack.enter_context(router(workdir, [f"127.0.0.1:{p['otlp_grpc']}" for _, p in samplers]))
        since = datetime.now(UTC)
        two = Workload(("mcpobs-e2e-routed-server", "mcpobs-e2e-routed-client"), TWO_TIER)
        drive(workdir, "two-tier", two, routed, routed)
        direct = [f"http://127.0.0.1:{p['otlp_http']}/v1/traces" for _, p in samplers]
        one = Workload(("mcpobs-e2e-split-server", "mcpobs-e2e-split-client"), ONE_TIER)
        drive(workdir, "one-tier", one, direct[0], direct[1])
        sent_in = time.monotonic() - began

        def look() -> None:
            for workload in (two, one):
                workload.arrived = [sampler_spans(b.url, workload.services, since) for b, _ in samplers]

        expected = expected_in_two_tiers(two)
        deadline = time.monotonic() + 120
        while True:  # a kept trace lands a decision wait after its first span, and then whole
            look()
            landed = {t for t in expected if any(two.whole_in(t, i) for i in range(len(samplers)))}
            if landed == expected or time.monotonic() > deadline:
                break
            time.sleep(1)
        time.sleep(DECISION_WAIT_S + 2)  # the last decisions, and anything that should not land
        look()
        print(f"\ntrace routing, {sent_in:.0f}s to send, {time.monotonic() - began:.0f}s in all")
        for name, workload in (("two tiers", two), ("one tier", one)):
            print(f"{name}: {json.dumps(workload.table())}")  # shown with -s; the numbers for the docs
        for name, workload in (("two tiers", two), ("one tier", one)):
            one_sided = [
                sorted((s["kind"], s["name"], s["outcome"], s["status"]) for s in spans.values())
                for spans in workload.sent.values()
                if len({s["kind"] for s in spans.values()}) < 2
            ]
            print(f"{name}: traces of one process only: {one_sided}")
        spans = sum(len(t) for t in two.sent.values())
        print(
            f"two tiers: traces per sampler {[len(a) for a in two.arrived]}, {spans / len(two.sent):.2f} spans a trace"
        )
        print(f"samplers' peak RSS: {[_peak_rss(b.process.pid) for b, _ in samplers]}")
        yield {"two": two, "one": one}


def _peak_rss(pid: int) -> str:
    try:
        return next(
            line.split(":")[1].strip() for line in Path(f"/proc/{pid}/status").open() if line.startswith("VmHWM")
        )
    except (OSError, StopIteration):
        return "?"


def test_each_process_sent_its_half_of_every_call(runs):
    for workload in runs.values():
        by_kind = workload.by_kind()
        assert {k: len(ids) for k, ids in by_kind.items() if k is not None} == workload.calls
        for kind, ids in by_kind.items():
            if kind is None:
                continue
            for trace_id in ids:
                spans = workload.sent[trace_id].values()
                server = [s for s in spans if s["kind"] == "SERVER" and s["name"].startswith("tools/call")]
                client = [s for s in spans if s["kind"] == "CLIENT" and s["name"].startswith("tools/call")]
                assert len(server) == 1 and len(client) == 1, (kind, list(spans))
                if kind == "output_validation":  # only the client flags it
                    assert server[0]["outcome"] == "ok" and client[0]["error_type"] == "output_validation"
                elif kind in SERVER_FLAGGED:
                    assert server[0]["outcome"] != "ok"


@pytest.mark.parametrize("kind", ["tool_error", "server_error", "output_validation", "cancelled"])
def test_two_tiers_keep_every_failing_trace_whole_in_one_sampler(runs, kind):
    two = runs["two"]
    ids = two.by_kind()[kind]
    broken = [(t, two.holders(t)) for t in ids if not two.whole_in_one(t)]
    assert not broken, f"{len(broken)} of {len(ids)} {kind} traces not whole in exactly one sampler: {broken[:3]}"


def test_two_tiers_keep_the_ok_traces_the_hash_picks_whole(runs):
    two = runs["two"]
    oks = [t for t in two.sent if not flagged(two, t)]
    assert len(oks) >= TWO_TIER["ok"]
    for trace_id in oks:
        if kept_by_hash(trace_id, KEEP_PERCENT):
            assert two.whole_in_one(trace_id), f"{trace_id}: the probabilistic policy keeps it, whole"
        else:
            assert not two.holders(trace_id), f"{trace_id}: no policy keeps an ok trace outside the fraction"
    kept = sum(kept_by_hash(t, KEEP_PERCENT) for t in oks)
    assert 0.05 * len(oks) < kept < 0.15 * len(oks), f"{kept} of {len(oks)}: not the configured 10%"


def test_two_tiers_hold_no_trace_in_part_and_use_both_samplers(runs):
    two = runs["two"]
    held = {t for sampler in two.arrived for t in sampler}
    assert held <= set(two.sent), "a sampler holds traces this workload never sent"
    partial = [t for t in held if not two.whole_in_one(t)]
    assert not partial, f"{len(partial)} traces arrived split or without some of their spans: {partial[:3]}"
    assert all(len(sampler) > len(held) // 5 for sampler in two.arrived), [len(s) for s in two.arrived]


def test_one_tier_splits_every_failing_trace(runs):
    """The counterexample: each process exports to its own sampler, and no trace arrives whole."""
    one = runs["one"]
    server_sampler, client_sampler = 0, 1
    # Every call's trace has both halves (test_each_process_sent_its_half_of_every_call); a
    # trace only one process has (a GET the server refuses: a SERVER span alone) is whole wherever it lands.
    both = [t for t in one.sent if {s["kind"] for s in one.sent[t].values()} >= {"CLIENT", "SERVER"}]
    assert not any(one.whole_in(t, i) for t in both for i in (0, 1)), "a trace arrived whole in one tier"
    by_kind = one.by_kind()
    for kind in SERVER_FLAGGED:  # both halves kept, one in each sampler
        for trace_id in by_kind[kind]:
            assert one.holders(trace_id) == [server_sampler, client_sampler], (kind, trace_id)
    for trace_id in by_kind["output_validation"]:
        # The client's sampler keeps its failing half; the server's saw an ok call and kept its
        # half only if the trace id falls in the 10%.
        expected = [server_sampler, client_sampler] if kept_by_hash(trace_id, KEEP_PERCENT) else [client_sampler]
        assert one.holders(trace_id) == expected, trace_id
    for trace_id in by_kind["ok"]:
        expected = [server_sampler, client_sampler] if kept_by_hash(trace_id, KEEP_PERCENT) else []
        assert one.holders(trace_id) == expected, trace_id
    counted = Counter(len(one.holders(t)) for t in both)
    assert counted[2] >= sum(len(by_kind[k]) for k in SERVER_FLAGGED), counted
