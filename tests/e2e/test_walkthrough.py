"""The newcomer's walk: getting-started and the FastMCP page's end-to-end section, run as written.

Against real Jaeger and Prometheus, each page's code blocks run as a reader runs them: the
Python blocks saved under the names its shell lines use, the shell blocks run by bash (the
export block starts the server, the client's line runs the client, `python -m mcpobs show`
and the Prometheus query look). Only the addresses change: the stack's free ports for the
page's 4318 and 9090, and a free port for the server's 8000 (a `sitecustomize` gives
`MCPServer.run` the port, `FASTMCP_PORT` gives FastMCP its own; the client's URL is
rewritten). `python` on PATH is this interpreter.

Done when the page's `show` prints the call's CLIENT span with its SERVER span under it, in one
trace of both services, and a non-zero request count after the one run. The seconds from
starting the server to each are printed (``pytest -s``), the figure the docs quote.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from backends import Stack, stack
from processes import free_port, interrupt, start, wait_for_port

from mcpobs import semconv as S

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SITECUSTOMIZE = """
import os

if os.environ.get("WALK_PORT"):
    from mcp.server.mcpserver import MCPServer

    _run = MCPServer.run
    MCPServer.run = lambda self, transport="stdio", **kw: _run(self, transport, **{**kw, "port": int(os.environ["WALK_PORT"])})
"""
WAIT_S = 60  # the page says about 5 s; a loaded 2-core machine gets twelve times that


@dataclass
class Page:
    server: str  # the Python blocks
    client: str
    serve: str  # the shell blocks
    run_client: list[str]
    show: str
    query: str | None


def page(name: str, section: str | None = None) -> Page:
    """The page's blocks (only `section`'s, up to the next ``## `` heading, when given)."""
    text = (ROOT / "docs" / name).read_text()
    if section:
        begin = text.index(section)
        end = text.find("\n## ", begin + len(section))
        text = text[begin : end if end > 0 else None]
    blocks = [(m[1], m[2]) for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.M | re.S)]
    python = [code for language, code in blocks if language == "python"]
    bash = [code for language, code in blocks if language == "bash"]
    (server,) = [c for c in python if '.run("streamable-http")' in c or '.run(transport="http")' in c]
    (client,) = [c for c in python if "127.0.0.1:8000" in c and c != server]
    (serve,) = [c for c in bash if "export OTEL_SERVICE_NAME" in c]
    lines = [line for c in bash if c != serve for line in c.splitlines() if line.strip() and not line.startswith("#")]
    run_client = [line for line in lines if re.search(r"\bpython \w+\.py", line)]
    (show,) = [line for line in lines if line.startswith("python -m mcpobs show")]
    queries = [line for line in lines if line.startswith("curl ") and "/api/v1/query" in line]
    return Page(server, client, serve, run_client, show, queries[0] if queries else None)


def script_name(line: str) -> str:
    return re.findall(r"\bpython (\w+\.py)", line)[-1]


def joined(out: str, services: set[str]) -> bool:
    """Every CLIENT `tools/call get_order_status` has the SERVER one right under it, in a trace of `services`."""
    lines = out.splitlines()
    calls = [i for i, line in enumerate(lines[:-1]) if "tools/call get_order_status" in line and " CLIENT " in line]
    for i in calls:
        line, below = lines[i], lines[i + 1]
        header = next((h for h in reversed(lines[:i]) if h.startswith("trace ")), "")
        shown = set(header.rpartition("(")[2].rstrip(")").split(", "))
        nested = len(below) - len(below.lstrip()) > len(line) - len(line.lstrip())
        if not ("tools/call get_order_status" in below and " SERVER " in below and nested and shown == services):
            return False
    return bool(calls)


def count(out: str, metric: str, tool_outcome: str) -> int:
    """The value of `metric`'s row for ``tools/call get_order_status`` with that outcome (0 when absent)."""
    lines = out.splitlines()
    if f"  {metric}" not in lines:
        return 0
    rows = lines[lines.index(f"  {metric}") + 1 :]
    for row in rows:
        if not row.startswith("    "):
            break
        words = row.split()
        if words[:3] == ["tools/call", "get_order_status", tool_outcome]:
            return int(words[-1])
    return 0


@dataclass
class Walked:
    tree_s: float  # from starting the server to the joined tree in `show`
    count_s: float  # to the non-zero counts
    shown: str
    failures: subprocess.CompletedProcess[str]  # `show --failures`


def reader_shell(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The reader's folder, and their shell's environment: `python` on PATH is this interpreter, a
    `sitecustomize` gives `MCPServer.run` the port in WALK_PORT, and none of our OTEL_* variables."""
    work, shims = tmp_path / "reader", tmp_path / "shims"
    work.mkdir()
    shims.mkdir()
    (shims / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # a symlink would lose the venv
    (shims / "python").chmod(0o755)
    (shims / "sitecustomize.py").write_text(SITECUSTOMIZE)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "FASTMCP_", "JAEGER_"))}
    base.update(
        PATH=f"{shims}{os.pathsep}{base.get('PATH', '')}",
        PYTHONPATH=os.pathsep.join([str(shims), base.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        PYTHONUNBUFFERED="1",
    )
    return work, base


def on_the_stack(backends: Stack, code: str) -> str:
    """A page's code with its addresses (OTLP 4318, Prometheus 9090, Jaeger's query 16686) the stack's."""
    jaeger_otlp = backends.otlp_traces.removeprefix("http://").removesuffix("/v1/traces")
    code = code.replace("127.0.0.1:4318", jaeger_otlp)
    code = code.replace("127.0.0.1:9090", backends.prometheus.url.removeprefix("http://"))
    return code.replace("http://127.0.0.1:16686", backends.jaeger.url)


def serving(serve: str, work: Path, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """The page's serve block run by bash in the reader's folder, what it says in `log`."""
    with log.open("w") as out:
        return start(["bash", "-c", serve], cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT)


def walk(tmp_path: Path, doc: Page, outcomes: tuple[str, ...]) -> Walked:
    """Run the page; what `show` printed once the joined tree and the counts were there."""
    work, base = reader_shell(tmp_path)
    port = free_port()
    timings: dict[str, float] = {}
    with stack(tmp_path) as backends:

        def addresses(code: str) -> str:
            return on_the_stack(backends, code)

        serve = addresses(doc.serve)
        server_file = script_name(serve)
        (work / server_file).write_text(doc.server)
        clients = [addresses(line) for line in doc.run_client]
        for line in clients:
            (work / script_name(line)).write_text(doc.client.replace("127.0.0.1:8000", f"127.0.0.1:{port}"))
        exported = dict(re.findall(r"^export (\w+)=(\S+)", serve, re.M))
        shell = {**base, **exported, "JAEGER_QUERY_HTTP": backends.jaeger.url.removeprefix("http://")}

        def bash(code: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                ["bash", "-c", code], cwd=work, env=shell, capture_output=True, text=True, timeout=timeout
            )

        log = tmp_path / "server.log"
        began = time.monotonic()
        server = serving(serve, work, {**base, "WALK_PORT": str(port), "FASTMCP_PORT": str(port)}, log)
        try:
            wait_for_port(port, server, "the page's server", timeout=60)
            for line in clients:
                ran = bash(line)
                assert ran.returncode == 0, ran.stdout + ran.stderr
            deadline = time.monotonic() + WAIT_S
            service = exported["OTEL_SERVICE_NAME"]
            client_service = re.findall(r"OTEL_SERVICE_NAME=(\S+)", clients[0])[0]
            while True:
                shown = bash(doc.show)
                now = time.monotonic() - began
                if shown.returncode == 0 and "tree" not in timings and joined(shown.stdout, {service, client_service}):
                    timings["tree"] = now
                if all(count(shown.stdout, S.SERVER_REQUESTS.name, o) >= 1 for o in outcomes):
                    timings.setdefault("count", now)
                if len(timings) == 2:
                    break
                assert time.monotonic() < deadline, (timings, shown.returncode, shown.stdout, shown.stderr)
                time.sleep(0.5)
            if doc.query:
                answer = json.loads(bash(addresses(doc.query)).stdout)
                values = {
                    s["metric"].get(S.prometheus_label(S.OUTCOME)): float(s["value"][1])
                    for s in answer["data"]["result"]
                }
                assert values.get(S.Outcome.OK, 0) >= 1, answer  # the page's query shows the one run
            failures = bash(f"{doc.show} --failures")
        finally:
            interrupt(server)
        said = log.read_text()  # (Ctrl-C ends `mcp.run` with a KeyboardInterrupt traceback: the SDK's, as for a reader)
        assert "Failed to export" not in said and "nothing answers" not in said, said
    return Walked(timings["tree"], timings["count"], shown.stdout, failures)


def test_getting_started_as_written_shows_the_joined_call_and_its_count(tmp_path: Path):
    walked = walk(tmp_path, page("getting-started.md"), (S.Outcome.OK,))
    assert walked.failures.returncode == 2, walked.failures  # nothing failed: said, not an empty page
    assert "no failed traces of shop" in walked.failures.stderr
    print(f"\ngetting-started: joined tree after {walked.tree_s:.1f} s, count after {walked.count_s:.1f} s")


def test_the_fastmcp_section_as_written_shows_the_joined_calls_and_the_failure(tmp_path: Path):
    walked = walk(tmp_path, page("fastmcp.md", "## End to end"), (S.Outcome.OK, S.Outcome.TOOL_ERROR))
    failed = [line for line in walked.shown.splitlines() if " SERVER " in line and f" {S.Outcome.TOOL_ERROR} " in line]
    assert failed and all("boundary=handler" in line for line in failed), walked.shown
    calls = [line.split()[2] for line in walked.shown.splitlines() if "tools/call get_order_status" in line]
    assert calls.count("SERVER") == calls.count("CLIENT") == 2, walked.shown  # no second SERVER span, FastMCP's
    only = walked.failures.stdout
    assert walked.failures.returncode == 0 and f" {S.Outcome.TOOL_ERROR} " in only, walked.failures
    assert f" {S.Outcome.OK} " not in only.partition("\nMetrics")[0], only  # the good call's trace is left out
    print(f"\nfastmcp: joined tree after {walked.tree_s:.1f} s, count after {walked.count_s:.1f} s")


# -- contract.md's replay section, against getting-started's server ------------------------------

REPLAY_BUDGET_S = 45.0
"""One `contract replay` command, interpreter start-up and the candidate's child process included."""


@dataclass
class ReplaySection:
    serve: str  # the bash block that starts getting-started's server with shapes on
    replays: list[str]  # the section's `contract replay ... --jaeger` lines, in order
    edits: list[str]  # the lines that write the breaking release
    ci_shell: str  # the plain-shell CI block
    ci_yaml_run: str  # the `run:` line of the GitHub Actions replay step


def replay_section() -> ReplaySection:
    text = (ROOT / "docs" / "contract.md").read_text()
    begin = text.index("## Before a release: replay")
    end = text.find("\n## ", begin + 1)
    blocks = [
        (m[1], m[2]) for m in re.finditer(r"^```(\w*)\n(.*?)^```", text[begin : end if end > 0 else None], re.M | re.S)
    ]
    bash = [code for language, code in blocks if language == "bash"]
    (serve,) = [c for c in bash if "export OTEL_SERVICE_NAME" in c]
    assert bash.index(serve) == 0 and "OTEL_PYTHON_MCP_RECORD_SHAPES=true" in serve  # what must be on, first
    (ci_shell,) = [c for c in bash if "$JAEGER_QUERY_URL" in c]
    lines = [line for c in bash if c not in (serve, ci_shell) for line in c.splitlines()]
    (yaml,) = [code for language, code in blocks if language == "yaml"]
    (run,) = re.findall(r"^\s+run: (python -m mcpobs contract replay .*)$", yaml, re.M)
    return ReplaySection(
        serve=serve,
        replays=[line for line in lines if line.startswith("python -m mcpobs contract replay") and "--jaeger" in line],
        edits=[line for line in lines if line.startswith("sed ")],
        ci_shell=ci_shell,
        ci_yaml_run=run,
    )


def test_the_replay_section_as_written_against_getting_starteds_server(tmp_path: Path):
    """contract.md's replay section run as a reader runs it, against getting-started's server.py as written:
    shapes on first, one call, the release as it is passes, the breaking release fails, and the CI job's
    shell fails on it too; the YAML job runs the very command the shell block does."""
    started, section = page("getting-started.md"), replay_section()
    assert section.ci_yaml_run in section.ci_shell
    work, base = reader_shell(tmp_path)
    port = free_port()
    (work / "server.py").write_text(started.server)
    (work / "client.py").write_text(started.client.replace("127.0.0.1:8000", f"127.0.0.1:{port}"))
    timings: dict[str, float] = {}
    with stack(tmp_path) as backends:

        def addresses(code: str) -> str:
            return on_the_stack(backends, code)

        serve = addresses(section.serve)
        exported = dict(re.findall(r"^export (\w+)=(\S+)", serve, re.M))

        def bash(code: str, **env: str) -> tuple[subprocess.CompletedProcess[str], float]:
            began = time.monotonic()
            done = subprocess.run(
                ["bash", "-c", code], cwd=work, env={**base, **env}, capture_output=True, text=True, timeout=120
            )
            return done, time.monotonic() - began

        began = time.monotonic()
        server = serving(serve, work, {**base, "WALK_PORT": str(port)}, tmp_path / "server.log")
        try:
            wait_for_port(port, server, "getting-started's server", timeout=60)
            called, _ = bash("python client.py", **{**exported, "OTEL_SERVICE_NAME": "shop-client"})
            assert called.returncode == 0, called.stdout + called.stderr
            current, *breaking = [addresses(line) for line in section.replays]
            while True:  # the server's batch reaches Jaeger within about 5 s
                passed, took = bash(current)
                if passed.returncode == 0:
                    break
                assert "no recorded tool-call shapes" in passed.stderr, passed.stdout + passed.stderr
                assert time.monotonic() - began < WAIT_S, passed.stderr
                time.sleep(1)
            timings["first verdict"] = time.monotonic() - began
            timings["replay"] = took
            assert "replayed 1 argument shape and" in passed.stdout and "0 would fail" in passed.stdout, passed.stdout
            assert passed.stderr == "", passed.stderr  # the server is importable: no note
            for line in section.edits:
                edited, _ = bash(line)
                assert edited.returncode == 0, edited.stderr
            (release2,) = breaking
            failed, timings["breaking replay"] = bash(release2)
            assert failed.returncode == 1, failed.stdout + failed.stderr
            assert failed.stdout.startswith(
                "fail: get_order_status: region: required by the candidate; callers omit it (1 call; clients "
            ), failed.stdout
            job, timings["CI shell"] = bash(section.ci_shell, JAEGER_QUERY_URL=backends.jaeger.url)
            assert job.returncode == 0 and "0 would fail" in job.stdout, job.stdout + job.stderr
            job, _ = bash(section.ci_shell.replace("server:mcp", "release2:mcp"), JAEGER_QUERY_URL=backends.jaeger.url)
            assert job.returncode == 1 and "1 would fail" in job.stdout, job.stdout + job.stderr
        finally:
            interrupt(server)
    assert all(timings[k] < REPLAY_BUDGET_S for k in ("replay", "breaking replay", "CI shell")), timings
    print(f"\ncontract.md's replay: {json.dumps({k: round(v, 1) for k, v in timings.items()})} (s)")
