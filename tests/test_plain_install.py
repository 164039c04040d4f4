"""A plain `pip install <checkout>` (no dev extra, so no pytest) runs the demo and imports `mcpobs.testing`.

The checkout's tracked files are copied to a scratch directory, installed into a new virtual
environment, and used from there, as a newcomer would. pip's download cache keeps repeats quick.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpobs import semconv as S

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def clean_copy(to: Path) -> Path:
    """The files git tracks (as they are in the work tree), without .venv or build output."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            target = to / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    return to


def test_a_plain_install_runs_the_demo_and_imports_the_testing_helpers(tmp_path):
    checkout = clean_copy(tmp_path / "checkout")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PYTHON", "VIRTUAL_ENV"))}
    install = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", str(checkout)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    has_pytest = subprocess.run([python, "-c", "import pytest"], capture_output=True, env=env)
    assert has_pytest.returncode != 0, "pytest is installed: this is not a plain install"

    imported = subprocess.run(
        [python, "-c", "import mcpobs.testing; print(mcpobs.testing.capture.__name__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert imported.returncode == 0, imported.stderr
    demo = subprocess.run(
        [python, "-m", "mcpobs", "demo"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )
    assert demo.returncode == 0, demo.stderr
    for outcome in set(S.Outcome) - {
        S.Outcome.STOPPED
    }:  # `stopped` takes a server stopping mid-call: tests/test_stops.py drives it to a real receiver
        assert f" {outcome.value} " in demo.stdout, outcome
