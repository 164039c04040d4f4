"""The scripts a newcomer runs first say what they do, and never pass by skipping.

Each runs as a real subprocess with Go (and for `scripts/test` Node.js and npm) hidden from
PATH and an empty backend directory: the state of a fresh machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def without(program: str) -> str:
    """PATH without the directories that hold `program`."""
    return os.pathsep.join(
        d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not os.access(Path(d) / program, os.X_OK)
    )


def machine_without(programs: set[str], tmp_path: Path) -> str:
    """A PATH of one folder holding every program on ours except `programs` (links to the real ones)."""
    folder = tmp_path / "path"
    folder.mkdir()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not directory or not Path(directory).is_dir():
            continue
        for program in Path(directory).iterdir():
            link = folder / program.name
            if program.name not in programs and not link.exists() and os.access(program, os.X_OK):
                link.symlink_to(program.resolve())
    return str(folder)


def fresh_machine(tmp_path: Path) -> dict[str, str]:
    """No Go, no built backends, no CI flag; this checkout's virtual environment."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "MCPOBS_NO_SKIPS")}
    env["PATH"] = without("go")
    env["MCPOBS_BACKENDS_BIN"] = str(tmp_path / "bin")
    env["MCPOBS_VENV"] = str(Path(sys.executable).parent.parent)
    env["MCPOBS_PYTHONS"] = ""  # no Debian folders: their root and debootstrap have a test of their own
    return env


def test_scripts_test_names_everything_missing_at_once_within_seconds(tmp_path):
    env = {**fresh_machine(tmp_path), "PATH": machine_without({"go", "node", "npm"}, tmp_path)}
    env["MCPOBS_VENV"] = str(tmp_path / "venv")  # none yet, as on a fresh clone
    started = time.monotonic()
    done = subprocess.run([str(ROOT / "scripts" / "test")], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0, done.stdout
    assert time.monotonic() - started < 15  # before the venv, the Go build, the npm install
    lines = done.stderr.splitlines()
    assert lines[0] == "scripts/test: cannot run on this machine yet; install, then run scripts/test again:"
    missing = [line for line in lines[1:] if line.startswith("  - ")]
    assert [m.split()[1] for m in missing] == ["Go", "Node.js"], done.stderr
    assert "MCPOBS_BACKENDS_BIN" in missing[0] and "https://go.dev/dl/" in missing[0]
    assert "npm" in missing[1] and "https://nodejs.org/" in missing[1]
    assert done.stdout == ""  # nothing started
    assert not (tmp_path / "venv").exists()


def _missing_for_the_folders(tmp_path: Path, hidden: set[str]) -> list[str]:
    env = {**fresh_machine(tmp_path), "PATH": machine_without({"go", "node", "npm", *hidden}, tmp_path)}
    env["MCPOBS_PYTHONS"] = "3.14"
    env["MCPOBS_VENV"] = str(tmp_path / "venv")
    done = subprocess.run([str(ROOT / "scripts" / "test")], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and done.stdout == ""
    assert not (tmp_path / "venv").exists()
    return [line for line in done.stderr.splitlines() if line.startswith("  - debootstrap")]


def test_scripts_test_names_debootstrap_when_the_other_pythons_need_it_and_it_cannot_be_fetched(tmp_path):
    debootstrap = _missing_for_the_folders(tmp_path, {"debootstrap", "apt-get"})
    assert len(debootstrap) == 1 and "MCPOBS_PYTHONS=" in debootstrap[0], debootstrap


def test_scripts_test_does_not_ask_for_debootstrap_when_apt_can_fetch_it(tmp_path):
    assert _missing_for_the_folders(tmp_path, {"debootstrap"}) == []


def test_scripts_test_with_the_backends_built_needs_no_go(tmp_path):
    env = {**fresh_machine(tmp_path), "PATH": machine_without({"go", "node", "npm"}, tmp_path)}
    for name in ("jaeger", "prometheus", "mcpobs-otelcol"):  # built before: Go is not needed any more
        binary = tmp_path / "bin" / name
        binary.parent.mkdir(exist_ok=True)
        binary.write_text("#!/bin/sh\n")
        binary.chmod(0o755)
    done = subprocess.run([str(ROOT / "scripts" / "test")], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "Go 1.26" not in done.stderr and "Node.js 20 or newer with npm" in done.stderr, done.stderr


def test_a_skipped_test_fails_under_scripts_test(tmp_path):
    env = fresh_machine(tmp_path)
    test = "tests/e2e/test_backend_restart.py"
    lenient = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", test], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert "skipped" in lenient.stdout and lenient.returncode == 0, lenient.stdout
    strict = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", test],
        cwd=ROOT,
        env={**env, "MCPOBS_NO_SKIPS": "1"},
        capture_output=True,
        text=True,
    )
    assert strict.returncode != 0 and "scripts/test counts as a failure" in strict.stdout, strict.stdout
    assert "run scripts/build-backends" in strict.stdout  # the skip's own instructions are kept


def test_the_first_scripts_stack_says_it_is_building_and_for_how_long(tmp_path):
    done = subprocess.run(
        [str(ROOT / "scripts" / "stack")], env=fresh_machine(tmp_path), capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0  # no Go: build-backends says so
    assert "Go is not installed" in done.stderr
    assert "building Jaeger v2 and Prometheus v3 from source" in done.stdout
    assert "minutes" in done.stdout
    assert all(line.startswith("#") for line in done.stdout.splitlines()), done.stdout


def test_getting_started_exports_what_scripts_stack_prints():
    """The doc's variables are the stack's, at its default ports (metrics to Prometheus, not Jaeger)."""
    import re

    defaults = {"$JAEGER_OTLP_HTTP": "127.0.0.1:4318", "$PROMETHEUS_LISTEN": "127.0.0.1:9090"}
    printed = (ROOT / "scripts" / "stack").read_text().split("<<ENV", 1)[1]  # the block it prints
    stack = dict(re.findall(r"^export (\w+)=(\S+)$", printed, re.M))
    for variable, value in defaults.items():
        stack = {k: v.replace(variable, value) for k, v in stack.items()}
    doc = dict(re.findall(r"^export (\w+)=(\S+)$", (ROOT / "docs" / "getting-started.md").read_text(), re.M))
    assert stack.pop("OTEL_SERVICE_NAME") and doc.pop("OTEL_SERVICE_NAME")
    assert doc == stack
