"""Every install line in the repository names this project's own distribution, `mcpobs-otel`.

`mcpobs` on PyPI is an unrelated project: a line saying `pip install mcpobs` would run a
stranger's code. The import name stays `mcpobs`; only the distribution is renamed.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from importlib.metadata import distribution, entry_points
from pathlib import Path

from mcpobs._version import DISTRIBUTION

ROOT = Path(__file__).resolve().parent.parent

INSTALL = re.compile(r"\bpip3?\s+install\b(?P<args>[^\n`|&;#]*)")
"""A `pip install` command (in prose, a code block or a script) up to the end of its command."""


def tracked_text_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    paths = [ROOT / name for name in filter(None, listed.decode().split("\0"))]
    keep = {".md", ".py", ".toml", ".sh", ".txt", ".yml", ".yaml", ""}
    return [p for p in paths if p.is_file() and p.suffix in keep and "tests" not in p.relative_to(ROOT).parts[:1]]


def install_lines() -> list[tuple[str, str]]:
    """(file:line, the arguments) of every `pip install` outside the tests."""
    found = []
    for path in tracked_text_files():
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for match in INSTALL.finditer(line):
                found.append((f"{path.relative_to(ROOT)}:{number}", match["args"]))
    return found


def test_the_distribution_name_is_one_name_everywhere():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == DISTRIBUTION == "mcpobs-otel"
    assert distribution(DISTRIBUTION).metadata["Name"] == DISTRIBUTION  # this checkout is what is installed
    for group in ("opentelemetry_instrumentor", "opentelemetry_pre_instrument"):
        (point,) = [e for e in entry_points(group=group) if e.value.startswith("mcpobs")]
        assert point.name == DISTRIBUTION, group  # what OTEL_PYTHON_DISABLED_INSTRUMENTATIONS names


def test_no_install_line_names_the_unrelated_mcpobs_on_the_index():
    lines = install_lines()
    assert len(lines) >= 5, lines  # the scan sees the README, docs and scripts
    bare = re.compile(r"""(?<![\w./-])["']?mcpobs(?![\w-])""")  # mcpobs, "mcpobs[grpc]"; not mcpobs-otel
    wrong = [(where, args) for where, args in lines if bare.search(args)]
    assert not wrong, f"install lines naming `mcpobs` (somebody else's package; ours is {DISTRIBUTION}): {wrong}"


def test_the_readme_and_getting_started_install_from_a_checkout_until_it_is_published():
    """`pip install mcpobs-otel` answers "No matching distribution found" until the name is published."""
    for page in ("README.md", "docs/getting-started.md"):
        args = [a.split() for where, a in install_lines() if where.startswith(page + ":")]
        assert ["."] in args, (page, args)  # the line a reader runs: from the checkout
    readme = [a for where, a in install_lines() if where.startswith("README.md:")]
    assert any(re.search(rf"(?<![\w-]){DISTRIBUTION}\b", a) for a in readme), readme  # the name, once published
    assert any(f'"{DISTRIBUTION}[grpc]"' in a for a in readme), readme
    said = (ROOT / "README.md").read_text()
    assert "not on the package index yet" in said and "once it is published" in said
