"""The canary gate's rules are what the registry makes now, name only registry names, and are loaded.

That they fire for a breaking release and not for a compatible one, on the real Prometheus, is
tests/e2e/test_canary_gate.py.
"""

from __future__ import annotations

import re
from pathlib import Path

from test_dashboards import PROMETHEUS_LABELS, names_in, registry_labels, registry_metric_names

from mcpobs import semconv as S
from mcpobs._cli import canary

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "deploy" / "canary-rules.yml"


def test_the_committed_rules_are_what_the_registry_makes_now():
    assert RULES.read_text() == canary.render(), (
        "deploy/canary-rules.yml is stale: run `python -m mcpobs canary-rules > deploy/canary-rules.yml`"
    )


def committed_rules() -> list[dict[str, str]]:
    """Each rule's alert, expr, release label and summary, read back from the file (no YAML parser needed)."""
    found = re.findall(
        r"- alert: (\S+)\n\s+expr: '(.*)'\n\s+for: \S+\n\s+labels:\n\s+severity: page\n"
        r"\s+release: '(.*)'\n\s+annotations:\n\s+summary: '(.*)'\n",
        RULES.read_text(),
    )
    return [{"alert": a, "expr": e.replace("''", "'"), "release": r, "summary": s} for a, e, r, s in found]


def test_every_rule_names_only_registry_metrics_and_labels_and_names_the_release():
    rules = committed_rules()
    assert {r["alert"] for r in rules} == {
        "MCPReleaseBreaksClientValidation",
        "MCPReleaseStaleCatalogs",
        "MCPReleaseErrorRatio",
        "MCPReleaseCatalogGrowth",
    }
    for rule in rules:
        metrics, labels = names_in(rule["expr"])
        labels |= {g.strip() for g in re.findall(r"\bon \(([^)]*)\)", rule["expr"])[0].split(",")}
        assert metrics and metrics <= registry_metric_names(), metrics - registry_metric_names()
        assert labels <= registry_labels() | PROMETHEUS_LABELS, labels - registry_labels()
        release = S.prometheus_label(S.SERVER_VERSION)
        assert f"by (job, {release})" in rule["expr"] or f"{release})" in rule["expr"]
        assert rule["release"] == f"{{{{ $labels.{release} }}}}"
        assert release in rule["summary"]


def test_prometheus_loads_the_rules_wherever_it_is_started():
    config = (ROOT / "deploy" / "prometheus.yml").read_text()
    # relative to the config, so scripts/stack and the e2e tests (deploy/prometheus.yml) load it
    assert re.findall(r"^rule_files: \[(.*)\]$", config, re.M) == [RULES.name]
    compose = (ROOT / "docker-compose.yml").read_text()
    assert f"- ./deploy/{RULES.name}:/etc/prometheus/{RULES.name}:ro" in compose  # beside prometheus.yml
    assert "--config.file=/etc/prometheus/prometheus.yml" in compose


def test_a_rule_compares_releases_instead_of_alerting_on_one():
    expr = canary.above_the_best_release("X", "job", 0.05)
    assert expr == "X > on (job) group_left () (min by (job) (X) + 0.05)"
    # a group with traffic but no failures is 0, so the old release is the baseline, not absent
    assert " or " in canary.validation_ratio("5m") and "* 0" in canary.validation_ratio("5m")


def test_the_gate_can_be_regenerated_with_other_windows_and_a_bad_value_says_how_to_fix_it():
    import subprocess
    import sys

    command = [sys.executable, "-m", "mcpobs", "canary-rules", "--window", "30s", "--for", "1m", "--margin", "0.1"]
    made = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert made == canary.render("30s", "1m", 0.1)
    assert "[30s]" in made and "for: 1m" in made and "+ 0.1)" in made and "[5m]" not in made
    bad = subprocess.run([*command[:4], "--window", "5 minutes"], capture_output=True, text=True)
    assert bad.returncode == 2 and "not a Prometheus duration; write e.g. 30s" in bad.stderr
    bad = subprocess.run([*command[:4], "--margin", "5"], capture_output=True, text=True)
    assert bad.returncode == 2 and "between 0 and 1" in bad.stderr


def test_a_catalog_budget_adds_its_rule_and_a_bad_one_says_how_to_fix_it():
    """Issue 53: a release whose catalog is over the team's token budget, or grew past the limit, fires."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "mcpobs", "canary-rules", "--catalog-budget", "8000", "--catalog-growth", "0.1"]
    made = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert made == canary.render(catalog_growth=0.1, catalog_budget=8000)
    tokens = S.prometheus_name(S.CATALOG_SIZE_TOKENS)
    release = S.prometheus_label(S.SERVER_VERSION)
    assert f"expr: 'max by (job, {release}) ({tokens}) > 8000'" in made
    assert f"(min by (job) (max by (job, {release}) ({tokens})) * 1.1)'" in made
    assert "- alert: MCPReleaseCatalogOverBudget" in made and "- alert: MCPReleaseCatalogGrowth" in made
    assert "MCPReleaseCatalogOverBudget" not in canary.render()  # no budget unless one is set
    bad = subprocess.run([*command[:4], "--catalog-growth", "0"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--catalog-growth 0.0 must be a fraction above 0" in bad.stderr
