"""Gate 3, end to end: a corpus recorded from live traffic in the real Jaeger, replayed against four candidates.

A server release (tests/corpus_release.py) serves two client releases over Streamable HTTP, both
instrumented and exporting to Jaeger. `mcpobs contract replay` then reads the corpus from Jaeger's
query API, and from an OTLP JSON file holding the same spans, one ExportTraceServiceRequest per
line as a collector's `file` exporter writes them (the Jaeger build has no `file` exporter: the
file is written from what Jaeger's API returns, which is OTLP JSON, hex ids and all): a compatible candidate (a new optional field) passes; one making `unit` required, one
dropping the enum member `pallet` and one forbidding the `note` new clients send each fail, naming
the tool, the field and the calls behind it. No argument value reaches Jaeger or the file.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from backends import get, jaeger
from corpus_release import SECRET_PREFIX, expected
from processes import free_port, start, stop, wait_for_port

from mcpobs import semconv as S

pytestmark = pytest.mark.e2e

HERE = Path(__file__).parent
TESTS = HERE.parent
ROUNDS = 3
CALLS = 5 * ROUNDS  # 3 calls per round from release 1.0.0, 2 from 2.0.0
SAMPLED_SPANS = 11
"""Server spans carrying a definition, counted per client release: release 1.0.0's calls 1-6 (its 3
shapes at counts 1 and 2) and 8 (the result shape at 8); release 2.0.0's calls 1-4 (its 2 shapes at
counts 1 and 2): 7 + 4."""
SERVICE = "corpus-stock"
CLIENTS = "corpus-host"
WANTED = {
    "required": "fail: check_stock: unit: required by the candidate; callers omit it ({n} calls; clients "
    "support-host/1.0.0, support-host/2.0.0; e.g. trace",
    "dropped_enum": 'fail: check_stock: unit: enum member "pallet" is gone; callers send it ({n} calls; clients '
    "support-host/1.0.0; e.g. trace",
    "closed": "fail: check_stock: note: callers send it; the candidate forbids additional properties ({n} calls; "
    "clients support-host/2.0.0; e.g. trace",
}


def otel_env(otlp_traces: str, service: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return {
        **env,
        "PYTHONPATH": os.pathsep.join([str(TESTS), str(HERE)]),
        "OTEL_SERVICE_NAME": service,
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": otlp_traces,
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_BSP_SCHEDULE_DELAY": "200",
        "OTEL_PYTHON_MCP_RECORD_SHAPES": "true",  # the corpus is opt-in (docs/contract.md)
    }


def replay(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "mcpobs", "contract", "replay", *args],
        capture_output=True,
        text=True,
        cwd=TESTS,  # the candidates are module:attribute names in tests/corpus_release.py
        env={**os.environ, "PYTHONPATH": str(TESTS)},
        timeout=180,
    )
    return done, time.perf_counter() - began


def recorded_calls(jaeger_url: str) -> int:
    params = {
        "query.service_name": SERVICE,
        "query.operation_name": "tools/call check_stock",
        "query.start_time_min": "2000-01-01T00:00:00Z",
        "query.start_time_max": "2100-01-01T00:00:00Z",
        "query.num_traces": "1000",
    }
    status, body = get(f"{jaeger_url}/api/v3/traces", params)
    return body.count(S.TOOL_ARGUMENTS_SHAPE_ID.encode()) if status == 200 else 0


def everything(jaeger_url: str, service: str) -> bytes:
    params = {
        "query.service_name": service,
        "query.start_time_min": "2000-01-01T00:00:00Z",
        "query.start_time_max": "2100-01-01T00:00:00Z",
        "query.num_traces": "1000",
    }
    status, body = get(f"{jaeger_url}/api/v3/traces", params)
    assert status == 200, body[:300]
    return body


def run_workload(tmp_path: Path, jaeger_url: str, otlp: str, sampled: bool = False) -> None:
    """The server release and both client releases, until every call has reached Jaeger (or, tail-sampled,
    until the shapes' spans have: the rest are dropped)."""
    port = free_port()
    with (tmp_path / "server.log").open("wb") as log:
        server = start(
            [sys.executable, str(HERE / "serve_corpus.py"), str(port)],
            env=otel_env(otlp, SERVICE),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for_port(port, server, "the corpus server", timeout=60)
        clients = subprocess.run(
            [sys.executable, str(HERE / "corpus_clients.py"), f"http://127.0.0.1:{port}/mcp", str(ROUNDS)],
            env=otel_env(otlp, CLIENTS),
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert clients.returncode == 0, clients.stderr[-3000:]
        wanted = SAMPLED_SPANS if sampled else CALLS
        deadline = time.monotonic() + 90
        while recorded_calls(jaeger_url) < wanted:
            assert server.poll() is None, (tmp_path / "server.log").read_text()[-3000:]
            assert time.monotonic() < deadline, f"{recorded_calls(jaeger_url)} of {wanted} calls reached Jaeger"
            time.sleep(0.5)
    finally:
        stop(server, 15)


def test_replay_from_jaeger_and_from_the_collector_file_names_what_would_fail(tmp_path, record_property):
    otlp_file = tmp_path / "traces.jsonl"
    ports = {k: free_port() for k in ("otlp_http", "otlp_grpc", "query", "query_grpc", "health")}
    otlp = f"http://127.0.0.1:{ports['otlp_http']}/v1/traces"
    with jaeger(tmp_path, ports) as backend:
        run_workload(tmp_path, backend.url, otlp)

        counts = expected(ROUNDS)
        timings: dict[str, float] = {}
        outputs: dict[str, str] = {}
        source = ("--jaeger", backend.url, "--service", SERVICE, "--since", "1h")
        ok, timings["jaeger:compatible"] = replay("corpus_release:compatible", *source)
        assert ok.returncode == 0, ok.stdout + ok.stderr
        assert f"({CALLS} calls, service {SERVICE}" in ok.stdout and "0 would fail" in ok.stdout, ok.stdout
        for candidate, line in WANTED.items():
            done, timings[f"jaeger:{candidate}"] = replay(f"corpus_release:{candidate}", *source)
            assert done.returncode == 1, done.stdout + done.stderr
            assert line.format(n=counts[candidate]) in done.stdout, done.stdout
            assert "1 would fail" in done.stdout, done.stdout
            outputs[candidate] = done.stdout

        # No argument value anywhere: not on the server's spans, not on the clients'.
        for service in (SERVICE, CLIENTS):
            body = everything(backend.url, service)
            assert S.TOOL_ARGUMENTS_SHAPE_ID.encode() in body or service == CLIENTS
            assert SECRET_PREFIX.encode() not in body, f"an argument value reached Jaeger in {service}'s spans"

        # The same spans as an OTLP JSON file, one request per line; the two services' searches return
        # the same traces (each holds both sides' spans): the replay counts each span once.
        with otlp_file.open("w") as out:
            for service in (SERVICE, CLIENTS):
                out.write(json.dumps(json.loads(everything(backend.url, service))["result"]) + "\n")
    text = otlp_file.read_text()
    assert SECRET_PREFIX not in text and S.TOOL_ARGUMENTS_SHAPE_DEFINITION in text
    ok, timings["file:compatible"] = replay("corpus_release:compatible", "--from", str(otlp_file))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    for candidate, line in WANTED.items():
        done, timings[f"file:{candidate}"] = replay(f"corpus_release:{candidate}", "--from", str(otlp_file))
        assert done.returncode == 1, done.stdout + done.stderr
        assert line.format(n=counts[candidate]) in done.stdout, done.stdout
        # the same verdict line from either source (the example trace may differ)
        assert done.stdout.split("; e.g. trace")[0] == outputs[candidate].split("; e.g. trace")[0]

    port = free_port()
    dead, _ = replay("corpus_release:compatible", "--jaeger", f"http://127.0.0.1:{port}", "--service", SERVICE)
    said = f"nothing answers at http://127.0.0.1:{port} (Jaeger's query API: "  # as `show` says it
    assert dead.returncode == 2 and said in dead.stderr and "--from" in dead.stderr, dead.stderr
    summary = {k: round(v, 2) for k, v in timings.items()}
    summary["replay_itself:closed"] = float(re.findall(r" in (\d+\.\d+)s: ", done.stdout)[0])
    record_property("replay_seconds", json.dumps(summary))
    print(f"\nreplay wall time (s, whole command incl. interpreter start): {json.dumps(summary)}", file=sys.stderr)


def test_under_tail_sampling_every_distinct_shape_survives(tmp_path):
    """deploy/tail-sampling.yaml keeping none of the ordinary traces (0%): the spans carrying a definition
    are kept by its `tool-call-shapes` policy, so every shape is replayed, its count a lower bound."""
    ports = {k: free_port() for k in ("otlp_http", "otlp_grpc", "query", "query_grpc", "health")}
    otlp = f"http://127.0.0.1:{ports['otlp_http']}/v1/traces"
    tail = {"MCPOBS_TAIL_KEEP_PERCENT": "0", "MCPOBS_TAIL_SLOW_MS": "60000", "MCPOBS_TAIL_DECISION_WAIT": "2s"}
    with jaeger(tmp_path, ports, layers=("tail-sampling.yaml",), env=tail) as backend:
        run_workload(tmp_path, backend.url, otlp, sampled=True)
        time.sleep(3)  # a decision wait more: nothing else arrives
        kept = recorded_calls(backend.url)
        assert kept < CALLS, f"tail sampling kept all {kept} calls: the test proves nothing"
        source = ("--jaeger", backend.url, "--service", SERVICE, "--since", "1h", "--corpus", str(tmp_path / "c.json"))
        ok, _ = replay("corpus_release:compatible", *source)
        assert ok.returncode == 0, ok.stdout + ok.stderr
        assert "replayed 5 argument shapes" in ok.stdout, ok.stdout  # every distinct shape
        corpus = json.loads((tmp_path / "c.json").read_text())
        assert all(s["definition"] is not None for s in corpus["shapes"])
        for candidate in WANTED:
            done, _ = replay(f"corpus_release:{candidate}", *source)
            assert done.returncode == 1 and "1 would fail" in done.stdout, done.stdout + done.stderr
