"""docs/contract.md's gate walk on mcp 1.x with FastMCP 3, run as a new user runs it (issue 52, test (d)).

The section's Python blocks are saved as `server.py` and `client.py`, its shell blocks run by bash
against a real Jaeger, in a folder where `python` is this venv's interpreter. Only addresses change
(Jaeger's free ports for the page's 4318 and 16686; a free port for the server's 8000, through
FastMCP's own `FASTMCP_PORT`). Done when
the replay of the running release exits 0 with its mistakes noted, the added optional argument
passes, and the added required one fails on the five calls that succeeded.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS), str(TESTS / "e2e")]

from backends import jaeger  # noqa: E402
from processes import free_port, interrupt, start, wait_for_port  # noqa: E402

SECTION = "## The gate walked: a corpus with caller mistakes, on either SDK line"
WAIT_S = 60


def blocks() -> list[tuple[str, str]]:
    text = (TESTS.parent / "docs" / "contract.md").read_text()
    begin = text.index(SECTION)
    end = text.find("\n## ", begin + 1)
    return [
        (m[1], m[2]) for m in re.finditer(r"^```(\w*)\n(.*?)^```", text[begin : end if end > 0 else None], re.M | re.S)
    ]


def test_the_walk_on_mcp1_as_written_reaches_the_verdicts(tmp_path: Path):
    found = blocks()
    server, client = [code for language, code in found if language == "python"]
    serve, call, current, candidates = [code for language, code in found if language == "bash"]
    port, ports = free_port(), {k: free_port() for k in ("otlp_http", "otlp_grpc", "query", "query_grpc", "health")}
    work, shims = tmp_path / "reader", tmp_path / "shims"
    work.mkdir()
    shims.mkdir()
    (shims / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (shims / "python").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "FASTMCP_", "PYTHONPATH"))}
    env["PATH"] = f"{shims}{os.pathsep}{env.get('PATH', '')}"
    env["FASTMCP_PORT"] = str(port)  # FastMCP's own setting: the page's server keeps its default, 8000
    if os.environ.get("PYTHONPATH"):  # the mcpobs under test, where this process has it
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]

    def local(code: str) -> str:
        code = code.replace("127.0.0.1:4318", f"127.0.0.1:{ports['otlp_http']}")
        code = code.replace("http://127.0.0.1:16686", f"http://127.0.0.1:{ports['query']}")
        return code.replace("8000", str(port))

    def bash(code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", local(code)], cwd=work, env=env, capture_output=True, text=True, timeout=180
        )

    (work / "server.py").write_text(local(server))
    (work / "client.py").write_text(local(client))
    with jaeger(tmp_path, ports):
        with (tmp_path / "server.log").open("w") as log:
            served = start(["bash", "-c", local(serve)], cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for_port(port, served, "the walk's FastMCP 3 server", timeout=60)
            called = bash(call)
            assert called.returncode == 0 and called.stdout.split() == ["refused", "refused"], (
                called.stdout + called.stderr
            )
            began = time.monotonic()
            while True:  # the server's batch reaches Jaeger within about 5 s
                passed = bash(current)
                if passed.returncode == 0 or "no recorded tool-call shapes" not in passed.stderr:
                    break
                assert time.monotonic() - began < WAIT_S, passed.stderr
                time.sleep(1)
            assert passed.returncode == 0, passed.stdout + passed.stderr
            assert "replayed 3 argument shapes" in passed.stdout and "0 would fail" in passed.stdout, passed.stdout
            assert (
                "calls the running release accepted: 5 accepted by the candidate, 0 refused; "
                "calls it refused (the callers' mistakes): 2 refused by the candidate too, 0 accepted"
            ) in passed.stdout
            walked = bash(candidates)
        finally:
            interrupt(served)
    out = walked.stdout
    assert walked.returncode == 1, out + walked.stderr  # the last line, the required region, fails
    assert "additive: get_order_status: input region: added (optional; FastMCP 3." in out, out
    assert "calls the running release accepted: 5 accepted by the candidate, 0 refused" in out, out
    assert (
        "fail: get_order_status: region: required by the candidate; callers omit it (5 calls; clients mcp/0.1.0; e.g. traces "
        in out
    ), out
    print(f"\n== {SECTION}\n{passed.stdout}\n{out}")
