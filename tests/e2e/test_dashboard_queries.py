"""Every PromQL expression of every committed dashboard returns data after the workload, and the
access-refused and availability panels return what the workload did.

The expressions are read from the committed JSON, never respelled here. A rate is not a count,
so the counts are checked on the same expression with each ``rate(X[...])`` replaced
by ``X`` (the counter's total over the run); the rate form must be non-zero, and both are also
evaluated without their ``or ... vector(0)`` fallback, so a panel cannot pass on the zero it
shows when nothing happened. The rollout dashboard needs releases rolling out:
test_canary_gate.py runs its expressions; the server dashboard's Tasks row needs a task worker:
tests/tasks/test_fastmcp4_tasks.py runs its expressions.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from test_dashboards import queries
from workload_session import CLIENT_SERVICE, SERVER_SERVICE, Session

from mcpobs import semconv as S

pytestmark = pytest.mark.e2e

SERVICE = {"mcpobs-server.json": SERVER_SERVICE, "mcpobs-client.json": CLIENT_SERVICE}
METHOD = S.prometheus_label(S.MCP_METHOD_NAME)
TOOL = S.prometheus_label(S.GEN_AI_TOOL_NAME)
BOUNDARY = S.prometheus_label(S.FAILURE_BOUNDARY)
ERROR_TYPE = S.prometheus_label(S.ERROR_TYPE)
ACCESS = f'{BOUNDARY}="{S.Boundary.ACCESS.value}"'
FALLBACK = re.compile(r"\s+or\s+(?:on\s*\(\)\s*)?vector\(0\)")
RATE = re.compile(r"rate\((\w+\{[^}]*\})\[[^\]]+\]\)")

# What tests/e2e/workload.py did, in each of its two passes: connected twice to the shop's
# bearer-protected billing endpoint (401, then 403 for a token without the scope). The SDK
# probes server/discover, is refused, falls back to initialize and is refused again: two
# refused requests per attempt on each side. The server cannot name the initialize (a legacy
# request carries no Mcp-Method header, and the refusal comes before the body is read): _OTHER.
# One tool refused its caller (PermissionError): access refused on the server, and on the client
# too, which sees only an isError result but reads the server's verdict in its _meta.
PASSES = 2
ACCESS_REFUSED = {
    "mcpobs-server.json": {"server/discover": 2 * PASSES, S.OTHER: 2 * PASSES, "tools/call": PASSES},
    "mcpobs-client.json": {"server/discover": 2 * PASSES, "initialize": 2 * PASSES, "tools/call": PASSES},
}
ACCESS_REFUSED_BY = {
    "mcpobs-server.json": (TOOL, {None: 4 * PASSES, "override_refund_limit": PASSES}),
    "mcpobs-client.json": (ERROR_TYPE, {"401": 2 * PASSES, "403": 2 * PASSES, S.TOOL_ERROR: PASSES}),
}
# And found one server down (a refused connection at server/discover), and was answered with a
# stale check_stock result that failed the output schema it listed. (Its unknown prompt is a
# server_error too while MCPServer answers it with -32603: not counted on here, that is the
# prompt's classification, not availability's.)
UNAVAILABLE = {
    ("server/discover", S.Boundary.TRANSPORT.value, "ConnectError"): PASSES,
    ("tools/call", S.Boundary.HANDLER.value, S.OUTPUT_VALIDATION): PASSES,
}


def as_grafana_would_send(dashboard: str, expr: str) -> str:
    """The expression with the dashboard's variables filled in: this run's service, every tool."""
    return expr.replace("$service", SERVICE[dashboard]).replace("$tool", ".*").replace("$__rate_interval", "1m")


def without_fallback(expr: str) -> str:
    return FALLBACK.sub("", expr)


def counted(expr: str) -> str:
    """The expression over the counters' totals since the run began, not their rates."""
    return RATE.sub(r"\1", expr)


def selectors(expr: str) -> list[str]:
    """The series selectors inside the expression's rates, in order."""
    return RATE.findall(expr)


def values(rows: list[dict[str, Any]], *labels: str) -> dict[Any, float]:
    key = (lambda m: m.get(labels[0])) if len(labels) == 1 else (lambda m: tuple(m.get(la) for la in labels))
    return {key(r["metric"]): float(r["value"][1]) for r in rows}


def panel(dashboard: str, title: str) -> str:
    (expr,) = [e for d, t, e in queries() if d == dashboard and t == title]
    return as_grafana_would_send(dashboard, expr)


TASKS = tuple(S.prometheus_name(m) for m in (S.TASK_DURATION, S.TASK_QUEUE_WAIT, S.TASKS_IN_FLIGHT))
"""The server dashboard's Tasks row: fastmcp-tasks does not install beside this workload's FastMCP,
so tests/tasks/test_fastmcp4_tasks.py runs those expressions on what a task worker exported."""


@pytest.mark.parametrize(
    ("dashboard", "panel", "expr"),
    [q for q in queries() if q[0] in SERVICE and not any(metric in q[2] for metric in TASKS)],
)
def test_every_dashboard_query_returns_data_from_the_real_prometheus(e2e, dashboard, panel, expr, record_property):
    rows = e2e.promql(as_grafana_would_send(dashboard, expr), at=e2e.landed)
    record_property("series", len(rows))
    assert rows, f"{dashboard} / {panel}: no data for {expr}"


def access_panels() -> list[tuple[str, str, str]]:
    return [q for q in queries() if q[0] in SERVICE and ACCESS in q[2]]


def test_both_dashboards_have_an_access_refused_panel():
    assert {d for d, _, _ in access_panels()} == set(SERVICE)


@pytest.mark.parametrize(("dashboard", "panel", "expr"), access_panels())
def test_access_refused_panels_show_the_workloads_refusals(e2e: Session, dashboard, panel, expr, record_property):
    expected = ACCESS_REFUSED[dashboard]
    sent = as_grafana_would_send(dashboard, expr)
    shown = values(e2e.promql(sent, at=e2e.landed), METHOD)
    record_property("shown", shown)
    # one series per refused method, each rising; no unnamed zero series from the fallback beside them
    assert set(shown) == set(expected), f"{panel}: {shown}"
    assert all(rate > 0 for rate in shown.values()), shown
    assert set(values(e2e.promql(without_fallback(sent), at=e2e.landed), METHOD)) == set(expected)
    totals = values(e2e.promql(without_fallback(counted(sent)), at=e2e.landed), METHOD)
    record_property("totals", totals)
    assert totals == expected
    by, counts = ACCESS_REFUSED_BY[dashboard]
    (selector,) = selectors(sent)
    assert values(e2e.promql(f"sum by ({by}) ({selector})", at=e2e.landed), by) == counts


def test_client_availability_counts_the_outage_and_never_an_access_refusal(e2e: Session, record_property):
    sent = panel("mcpobs-client.json", "Availability seen by the client")
    (shown,) = e2e.promql(sent, at=e2e.landed)
    (bare,) = e2e.promql(without_fallback(sent), at=e2e.landed)
    record_property("availability", shown["value"][1])
    assert 0 < float(shown["value"][1]) < 1  # a server was down: not 100%
    assert bare["value"][1] == shown["value"][1]  # the failures are data, not the fallback's zero
    failed, completed = selectors(sent)
    by = (METHOD, BOUNDARY, ERROR_TYPE)
    unavailable = values(e2e.promql(f"sum by ({', '.join(by)}) ({failed})", at=e2e.landed), *by)
    record_property("unavailable", unavailable)
    assert {k: unavailable.get(k) for k in UNAVAILABLE} == UNAVAILABLE  # the outage counts
    assert not [k for k in unavailable if k[1] == S.Boundary.ACCESS.value]  # not one access refusal does
    (refused,) = e2e.promql(f"sum({completed[:-1]}, {ACCESS}}})", at=e2e.landed)
    assert float(refused["value"][1]) == sum(ACCESS_REFUSED["mcpobs-client.json"].values())  # answered, not down
    (requests,) = e2e.promql(f"sum({completed})", at=e2e.landed)
    (overall,) = e2e.promql(without_fallback(counted(sent)), at=e2e.landed)
    record_property("over the run", overall["value"][1])
    assert float(overall["value"][1]) == pytest.approx(1 - sum(unavailable.values()) / float(requests["value"][1]))
