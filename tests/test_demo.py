"""`python -m mcpobs demo`, the README's first command, shows every outcome as a trace tree."""

from __future__ import annotations

import os
import subprocess
import sys

from mcpobs import semconv as S


def test_the_demo_prints_a_tree_for_every_outcome():
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    run = subprocess.run([sys.executable, "-m", "mcpobs", "demo"], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    for outcome in S.Outcome:
        assert f" {outcome.value} " in out, outcome
    for boundary in ("boundary=handler", "boundary=discovery", "boundary=arguments"):
        assert boundary in out
    assert sum("INTERNAL" in line and line.strip().startswith("progress ") for line in out.splitlines()) == 5
    assert "deliver tools_list_changed" in out and "publish tools_list_changed" in out
    assert "round=2" in out  # the elicitation's second round
    assert S.SERVER_REQUESTS.name in out and S.SERVER_OPERATION_DURATION.name in out
    client_line = next(line for line in out.splitlines() if "tools/call check_stock" in line and "CLIENT" in line)
    server_line = next(line for line in out.splitlines() if "tools/call check_stock" in line and "SERVER" in line)
    assert len(server_line) - len(server_line.lstrip()) > len(client_line) - len(client_line.lstrip())  # nested
