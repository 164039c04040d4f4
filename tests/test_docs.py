"""The documentation that is generated stays in step with the registry."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from mcpobs import semconv as S
from mcpobs._cli.conventions import render as render_conventions
from mcpobs._cli.reference import render
from mcpobs._cli.tail_sampling import KEPT_OUTCOMES
from mcpobs._cli.tail_sampling import render as render_tail_sampling

ROOT = Path(__file__).resolve().parent.parent


def test_reference_is_regenerated_from_the_registry():
    committed = (ROOT / "docs" / "reference.md").read_text()
    assert committed == render(), "docs/reference.md is stale: run `python -m mcpobs reference > docs/reference.md`"


def test_conventions_page_is_regenerated_from_the_registry():
    committed = (ROOT / "docs" / "conventions.md").read_text()
    assert committed == render_conventions(), (
        "docs/conventions.md is stale: run `python -m mcpobs conventions > docs/conventions.md`"
    )


def test_the_tail_sampling_config_is_regenerated_from_the_registry():
    committed = (ROOT / "deploy" / "tail-sampling.yaml").read_text()
    fix = "run `python -m mcpobs tail-sampling > deploy/tail-sampling.yaml`"
    assert committed == render_tail_sampling(), f"deploy/tail-sampling.yaml is stale: {fix}"
    # what it keeps, read back from the file: the registry's key and every outcome but ok
    (key, shapes) = re.findall(r"key: (\S+)\n\s+values:", committed)
    (values, pattern) = re.findall(r"values: \[(.*)\]", committed)
    assert key == S.OUTCOME
    assert set(values.split(", ")) == {o.value for o in S.Outcome} - {S.Outcome.OK.value} == set(KEPT_OUTCOMES)
    # and every span carrying a tool-call shape's definition (the corpus `contract replay` reads)
    assert (shapes, pattern) == (S.TOOL_SHAPE_RECORDER, '".+"')


def test_no_name_is_spelled_outside_the_registry():
    names = r"mcpobs\.[a-z_.]+|gen_ai\.|error\.type|rpc\.|network\.|jsonrpc\.|mcp\.(method|protocol|resource|session|server\.op|client\.op)"
    pattern = re.compile(rf"""["']({names})""")
    offenders = []
    for path in (ROOT / "src" / "mcpobs").rglob("*.py"):
        if path.name == "semconv.py":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line) and "getLogger" not in line and "import" not in line:
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_pydoc_reads_well():
    out = subprocess.run([sys.executable, "-m", "pydoc", "mcpobs"], capture_output=True, text=True, check=True).stdout
    for name in ("instrument", "uninstrument", "MCPInstrumentor"):
        assert name in out
    assert S.CONVENTION_VERSION.split()[-1] in S.CONVENTION_SOURCE


def test_every_dashboard_panel_is_documented():
    import json

    documented = (ROOT / "docs" / "dashboards.md").read_text()
    for path in (ROOT / "dashboards").glob("*.json"):
        for panel in json.loads(path.read_text())["panels"]:
            for target in panel.get("targets", []):
                assert target["expr"].replace("|", "\\|") in documented, (path.name, panel["title"])
