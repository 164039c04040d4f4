"""The server dashboard's queries return data for an mcp 1.x server, in a real Prometheus.

A FastMCP 1 shop (mcp 1.30, in .venv-sdk1-1.30.0) is instrumented by `mcpobs.instrument()` and
the standard OTEL_* variables alone; a 1.x `ClientSession` runs a day against it
(tests/e2e/workload1.py). Every PromQL expression of the committed server dashboard is then
asked of Prometheus, as Grafana would send it. Two panels show concepts mcp 1.x does not have,
and are empty by construction: pending-input rounds (1.x asks its client by a request of its
own, never an `input_required` result) and open subscription streams (1.x has no listen
streams; its `resources/updated` notifications are the "Subscription events delivered" panel).
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from backends import get, stack
from processes import free_port
from test_cross_line import sdk1_python
from test_dashboard_queries import TASKS, without_fallback
from test_dashboards import queries
from workload_session import otel_env, wait_for

from mcpobs import semconv as S

pytestmark = [pytest.mark.e2e, pytest.mark.sdk1]

HERE = Path(__file__).parent
SERVICE = "mcpobs-e2e-shop1"
WITHOUT_THE_CONCEPT = {"Pending-input rounds", "Open subscription streams"}


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory):
    python = str(sdk1_python())
    workdir = tmp_path_factory.mktemp("e2e-sdk1")
    with stack(workdir) as s:
        port = free_port()
        log = workdir / "server.log"
        with log.open("wb") as out:
            server = subprocess.Popen(
                [python, str(HERE / "serve_shop1.py"), str(port)],
                env=otel_env(s, SERVICE),
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        url = f"http://127.0.0.1:{port}/mcp"
        try:
            deadline = time.monotonic() + 30
            while get(url, timeout=1)[0] == 0:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the 1.x shop did not start:\n{log.read_text()}")
                time.sleep(0.2)
            client = subprocess.run(
                [python, str(HERE / "workload1.py"), url], capture_output=True, text=True, timeout=120
            )
        finally:
            server.terminate()
            server.wait(30)
        assert client.returncode == 0, client.stderr[-3000:]
        requests = S.prometheus_name(S.SERVER_REQUESTS)
        wait_for("metrics in Prometheus", lambda: _query(s, f'{requests}{{job="{SERVICE}"}}'))
        yield s, time.time()


def _query(s, expr: str, at: float | None = None):
    from backends import promql

    return promql(s.prometheus.url, expr, at)


def as_grafana_would_send(expr: str) -> str:
    """The expression with the dashboard's variables filled in: this run's 1.x service, every tool."""
    return expr.replace("$service", SERVICE).replace("$tool", ".*").replace("$__rate_interval", "1m")


SERVER_PANELS = [q for q in queries() if q[0] == "mcpobs-server.json" and not any(metric in q[2] for metric in TASKS)]
"""Not the Tasks row: this workload runs no tasks (tests/tasks/test_fastmcp4_tasks.py runs its
expressions on what a server and a task worker exported)."""


@pytest.mark.parametrize(("dashboard", "panel", "expr"), SERVER_PANELS)
def test_every_server_dashboard_query_returns_data_for_a_1x_server(prometheus, dashboard, panel, expr):
    s, landed = prometheus
    sent = as_grafana_would_send(expr)
    rows = _query(s, without_fallback(sent), at=landed)
    if panel in WITHOUT_THE_CONCEPT:
        assert rows == [], f"{panel}: mcp 1.x has no such thing, yet {rows}"
    else:
        assert rows, f"{panel}: no data for a 1.x server: {sent}"
