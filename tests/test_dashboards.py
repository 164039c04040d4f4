"""The committed dashboards are what the generator makes from the registry, and name only registry names.

That every expression returns data from a real Prometheus is in tests/e2e/test_dashboard_queries.py.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

from mcpobs import semconv as S

DASHBOARDS = Path(__file__).resolve().parents[1] / "dashboards"

# Names Prometheus adds itself: the service (job, instance) and histogram bounds.
PROMETHEUS_LABELS = {"job", "instance", "le"}
PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset"}


def generator() -> Any:
    spec = importlib.util.spec_from_file_location("generate_dashboards", DASHBOARDS / "generate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def committed() -> dict[str, dict[str, Any]]:
    return {p.name: json.loads(p.read_text()) for p in sorted(DASHBOARDS.glob("*.json"))}


def queries() -> list[tuple[str, str, str]]:
    """(dashboard, panel title, PromQL) for every target of every committed dashboard."""
    found = []
    for name, dashboard in committed().items():
        for panel in dashboard["panels"]:
            for target in panel.get("targets", ()):
                found.append((name, panel["title"], target["expr"]))
    return found


def variable_queries() -> list[str]:
    return [v["query"] for d in committed().values() for v in d["templating"]["list"] if v["type"] == "query"]


def registry_metric_names() -> set[str]:
    names = set()
    for spec in S.METRICS.values():
        base = S.prometheus_name(spec)
        names |= (
            {base + suffix for suffix in ("_bucket", "_sum", "_count")} if spec.instrument == "histogram" else {base}
        )
    return names


def registry_labels() -> set[str]:
    return {S.prometheus_label(a) for spec in S.METRICS.values() for a in spec.attributes}


def names_in(expr: str) -> tuple[set[str], set[str]]:
    """The metric names and the label names an expression uses."""
    labels = set(re.findall(r"(\w+)\s*(?:=~|!~|!=|=)\s*\"", expr))
    for group in re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", expr):
        labels |= {g.strip() for g in group.split(",") if g.strip()}
    labels |= set(re.findall(r"label_values\([^,]*,\s*(\w+)\)", expr))
    bare = re.sub(r"\{[^}]*\}|\b(?:by|without)\s*\([^)]*\)|,\s*\w+\)", "", expr)  # matchers, groupings
    metrics = set(re.findall(r"\b(mcp_\w+|mcpobs_\w+)", bare))
    return metrics, labels


def test_committed_dashboards_are_what_the_generator_makes_now():
    made = generator().build()
    on_disk = {p.name: p.read_text() for p in DASHBOARDS.glob("*.json")}
    assert set(made) == set(on_disk), "run: python dashboards/generate.py"
    for name, text in made.items():
        assert on_disk[name] == text, f"dashboards/{name} is stale: run python dashboards/generate.py"


def test_dashboards_state_the_pinned_convention_version():
    for dashboard in committed().values():
        assert S.CONVENTION_VERSION in dashboard["tags"]
        assert S.CONVENTION_VERSION in dashboard["description"]
        assert dashboard["schemaVersion"] == 42


@pytest.mark.parametrize(("dashboard", "panel", "expr"), queries())
def test_dashboards_name_only_registry_metrics_and_labels(dashboard, panel, expr):
    metrics, labels = names_in(expr)
    assert metrics, f"{panel}: no mcpobs metric in {expr}"
    assert metrics <= registry_metric_names(), metrics - registry_metric_names()
    assert labels <= registry_labels() | PROMETHEUS_LABELS, labels - registry_labels() - PROMETHEUS_LABELS


def test_selectors_for_service_and_tool_use_registry_names():
    for expr in variable_queries():
        metrics, labels = names_in(expr)
        assert metrics <= registry_metric_names()
        assert labels <= registry_labels() | PROMETHEUS_LABELS
    names = {v["name"] for d in committed().values() for v in d["templating"]["list"]}
    assert {"service", "tool"} <= names


def test_the_check_catches_a_name_the_registry_does_not_define():
    metrics, labels = names_in('sum by (tool) (rate(mcpobs_server_request_total{mcp_tool="x"}[5m]))')
    assert not metrics <= registry_metric_names()
    assert not labels <= registry_labels() | PROMETHEUS_LABELS


def test_prometheus_names_follow_the_otlp_translation():
    assert S.prometheus_name(S.SERVER_OPERATION_DURATION) == "mcp_server_operation_duration_seconds"
    assert S.prometheus_name(S.SERVER_REQUESTS) == "mcpobs_server_requests_total"
    assert S.prometheus_name(S.SUBSCRIPTION_STREAMS) == "mcpobs_subscription_streams"
    assert S.prometheus_label(S.GEN_AI_TOOL_NAME) == "gen_ai_tool_name"
