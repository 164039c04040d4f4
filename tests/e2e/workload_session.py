"""The end-to-end run: the shop served over HTTP and one client workload, against real backends.

Both the server and the client are subprocesses configured only by standard OTEL_*
variables, so what reaches the backends is what `mcpobs.instrument()` alone configures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from backends import Stack, get, promql, stack
from processes import free_port

from mcpobs import semconv as S

HERE = Path(__file__).parent
TESTS = HERE.parent
SERVER_SERVICE = "mcpobs-e2e-shop"
CLIENT_SERVICE = "mcpobs-e2e-agent"


@dataclass
class Session:
    stack: Stack
    started: datetime
    server_log: str
    client_log: str
    landed: float = 0.0
    """When the data had landed (Unix time): rates queried at this instant span the workload."""

    def traces(self, service: str) -> list[dict[str, Any]]:
        """Every span Jaeger holds for a service, as OTLP-JSON span dicts with their resource."""
        params = {
            "query.service_name": service,
            "query.start_time_min": (self.started - timedelta(minutes=1)).isoformat().replace("+00:00", "Z"),
            "query.start_time_max": (datetime.now(UTC) + timedelta(minutes=1)).isoformat().replace("+00:00", "Z"),
            "query.num_traces": "1000",
        }
        status, body = get(f"{self.stack.jaeger.url}/api/v3/traces", params)
        if status == 404:
            return []
        assert status == 200, f"Jaeger answered {status}: {body[:500]!r}"
        spans = []
        for resource_spans in json.loads(body)["result"]["resourceSpans"]:
            resource = {a["key"]: _value(a["value"]) for a in resource_spans["resource"].get("attributes", ())}
            for scope_spans in resource_spans["scopeSpans"]:
                for span in scope_spans["spans"]:
                    span["attributes"] = {a["key"]: _value(a["value"]) for a in span.get("attributes", ())}
                    span["resource"] = resource
                    spans.append(span)
        return spans

    def promql(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        return promql(self.stack.prometheus.url, expr, at)


def _value(v: dict[str, Any]) -> Any:
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in v:
            return v[key]
    if "intValue" in v:
        return int(v["intValue"])
    if "arrayValue" in v:
        return [_value(x) for x in v["arrayValue"].get("values", ())]
    return None


def otel_env(s: Stack, service: str) -> dict[str, str]:
    """The environment a user would set: standard variables only (protocol left to the default)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return {
        **env,
        "PYTHONPATH": str(TESTS),
        "OTEL_SERVICE_NAME": service,
        "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=e2e",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": s.otlp_traces,
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": s.otlp_metrics,
        "OTEL_METRIC_EXPORT_INTERVAL": "1000",
        "OTEL_BSP_SCHEDULE_DELAY": "200",
    }


def wait_for(what: str, found: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not found():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.5)
    time.sleep(1)  # let the rest of the same flush land


def _serve(s: Stack, workdir: Path) -> tuple[subprocess.Popen[bytes], str, Path]:
    port = free_port()
    log = workdir / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, str(HERE / "serve_shop.py"), str(port)],
            env=otel_env(s, SERVER_SERVICE),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 30
    while get(url, timeout=1)[0] == 0:
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the shop server did not start:\n{log.read_text()}")
        time.sleep(0.2)
    return server, url, log


@contextmanager
def run_workload(workdir: Path) -> Iterator[Session]:
    """Start the backends, serve the shop, run the client's day, wait until the data has landed."""
    with stack(workdir) as s:
        started = datetime.now(UTC)
        server, url, server_log = _serve(s, workdir)
        try:
            client = subprocess.run(
                [sys.executable, str(HERE / "workload.py"), url],
                env=otel_env(s, CLIENT_SERVICE),
                capture_output=True,
                text=True,
                timeout=120,
            )
        finally:
            server.terminate()  # uvicorn stops on SIGTERM; mcpobs flushes before the process dies of it
            server.wait(30)
        assert client.returncode == 0, client.stderr
        session = Session(s, started, server_log.read_text(), client.stdout + client.stderr)
        requests = S.prometheus_name(S.SERVER_REQUESTS)
        wait_for("server spans in Jaeger", lambda: session.traces(SERVER_SERVICE))
        wait_for("metrics in Prometheus", lambda: session.promql(f'{requests}{{job="{SERVER_SERVICE}"}}'))
        session.landed = time.time()
        yield session
