"""Jaeger killed in the middle of a run and started again on the same ports.

One client's day runs three times in a subprocess configured only by OTEL_* variables:
before the kill, while nothing listens, and after the restart. What the workload prints
must be byte for byte what it prints without mcpobs, and the spans made after the restart
must be queryable in the new Jaeger while the process still runs (export resumed, not
just the final flush at exit).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from backends import JAEGER_PORTS, get, jaeger
from processes import free_port

from mcpobs import semconv as S

pytestmark = pytest.mark.e2e

TESTS = Path(__file__).resolve().parents[1]
SERVICE = "mcpobs-restart"
PHASES = 3

WORKLOAD = """
import json, sys
import anyio
from opentelemetry import trace
if sys.argv[1] == "instrumented":
    import mcpobs
    mcpobs.instrument()
from test_faults import a_clients_day

tracer = trace.get_tracer("restart-workload")

async def main():
    for phase in range(1, 4):
        await anyio.to_thread.run_sync(sys.stdin.readline)  # the test says when
        with tracer.start_as_current_span(f"phase {phase}"):
            got = await a_clients_day("http")
        print(json.dumps(got), flush=True)

anyio.run(main)
"""


def env(otlp_http: int) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return {
        **clean,
        "PYTHONPATH": str(TESTS),
        "OTEL_SERVICE_NAME": SERVICE,
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"http://127.0.0.1:{otlp_http}/v1/traces",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_BSP_SCHEDULE_DELAY": "200",
    }


def spans_in(jaeger_url: str, since: datetime) -> list[dict[str, Any]]:
    params = {
        "query.service_name": SERVICE,
        "query.start_time_min": (since - timedelta(minutes=1)).isoformat().replace("+00:00", "Z"),
        "query.start_time_max": (datetime.now(UTC) + timedelta(minutes=1)).isoformat().replace("+00:00", "Z"),
        "query.num_traces": "1000",
    }
    status, body = get(f"{jaeger_url}/api/v3/traces", params)
    if status != 200:
        return []
    return [
        {**span, "attributes": {a["key"]: next(iter(a["value"].values()), None) for a in span.get("attributes", ())}}
        for resource_spans in json.loads(body)["result"]["resourceSpans"]
        for scope_spans in resource_spans["scopeSpans"]
        for span in scope_spans["spans"]
    ]


def phase_trace(jaeger_url: str, since: datetime, phase: int, timeout: float = 30) -> list[dict[str, Any]]:
    """The spans of one phase's trace, once its server spans have landed (or [] after `timeout`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        spans = spans_in(jaeger_url, since)
        roots = [s["traceId"] for s in spans if s["name"] == f"phase {phase}"]
        found = [s for s in spans if roots and s["traceId"] == roots[0]]
        if any(s["name"] == "tools/call get_order_status" for s in found):
            time.sleep(1)  # the rest of the same batch
            return [s for s in spans_in(jaeger_url, since) if s["traceId"] == roots[0]]
        time.sleep(0.3)
    return []


def test_jaeger_killed_mid_run_changes_no_result_and_export_resumes_when_it_returns(tmp_path: Path):
    ports = {key: free_port() for key in JAEGER_PORTS}
    run = [sys.executable, "-c", WORKLOAD]
    bare = subprocess.run(
        [*run, "bare"], input="go\n" * PHASES, env=env(ports["otlp_http"]), capture_output=True, text=True, timeout=60
    )
    assert bare.returncode == 0, bare.stderr[-3000:]
    assert len(bare.stdout.splitlines()) == PHASES

    since = datetime.now(UTC)
    printed: list[str] = []
    with jaeger(tmp_path, ports) as first:
        proc = subprocess.Popen(
            [*run, "instrumented"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=(tmp_path / "workload.err").open("w"),
            env=env(ports["otlp_http"]),
            text=True,
        )
        assert proc.stdin is not None and proc.stdout is not None

        def phase() -> None:
            proc.stdin.write("go\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            printed.append(proc.stdout.readline())  # type: ignore[union-attr]

        try:
            phase()
            assert phase_trace(first.url, since, 1), "phase 1 never reached the first Jaeger"
            first.process.kill()  # no goodbye: the exporter finds the port closed
            first.process.wait()
            killed = time.monotonic()
            phase()
        except BaseException:
            proc.kill()
            raise
    try:
        with jaeger(tmp_path, ports, name="jaeger-restarted") as again:
            restarted = time.monotonic()
            phase()
            after = phase_trace(again.url, since, 3)
            resumed = time.monotonic()
            during = phase_trace(again.url, since, 2, timeout=2)
            proc.stdin.close()  # type: ignore[union-attr]
            code = proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = (tmp_path / "workload.err").read_text()
    print(
        f"\nJaeger down {restarted - killed:.1f}s; phase 3 queryable {resumed - restarted:.1f}s after the restart; "
        f"phase 2 (made while down) {'landed after the restart' if during else 'lost'}"
    )
    assert code == 0, err[-3000:]
    assert "".join(printed) == bare.stdout  # the same results, and nothing else on stdout
    assert after, f"phase 3 never reached the restarted Jaeger:\n{err[-3000:]}"
    calls = [s for s in after if s["name"] == "tools/call get_order_status" and s["kind"] == 2]  # SERVER
    assert calls and all(s["attributes"][S.OUTCOME] in ("ok", "tool_error") for s in calls)
