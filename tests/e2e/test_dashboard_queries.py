"""Every PromQL expression of every committed dashboard returns data after the workload.

The rollout dashboard needs releases rolling out: test_canary_gate.py runs its expressions.
"""

from __future__ import annotations

import pytest
from test_dashboards import queries
from workload_session import CLIENT_SERVICE, SERVER_SERVICE

pytestmark = pytest.mark.e2e

SERVICE = {"mcpobs-server.json": SERVER_SERVICE, "mcpobs-client.json": CLIENT_SERVICE}


def as_grafana_would_send(dashboard: str, expr: str) -> str:
    """The expression with the dashboard's variables filled in: this run's service, every tool."""
    return expr.replace("$service", SERVICE[dashboard]).replace("$tool", ".*").replace("$__rate_interval", "1m")


@pytest.mark.parametrize(("dashboard", "panel", "expr"), [q for q in queries() if q[0] in SERVICE])
def test_every_dashboard_query_returns_data_from_the_real_prometheus(e2e, dashboard, panel, expr, record_property):
    rows = e2e.promql(as_grafana_would_send(dashboard, expr))
    record_property("series", len(rows))
    assert rows, f"{dashboard} / {panel}: no data for {expr}"
