"""Every code block in the README and docs/ runs as shown.

Blocks are read from the Markdown files and run the way a reader would use them:

- python: a block defining ``test_`` functions runs under pytest and must pass; a block that
  calls ``.run("streamable-http")`` (an MCPServer) or ``.run(transport="http")`` (FastMCP) is
  served (the harness picks a free port for `run`, and sets FASTMCP_PORT to it) and
  a doc's block that calls ``127.0.0.1:8000`` is run against it (or against
  examples/shop_http.py when the doc has no server); any other block runs as a script.
  Every one in a fresh interpreter, from the repository root, exporting nowhere.
- bash: ``bash -n``; every repository path it names exists; every ``python -m mcpobs``
  subcommand it uses exists. (Running scripts/test from a test would recurse; the rest build
  or serve for minutes. The demo, stack and jaeger-url commands have their own tests.)
- A block preceded by ``<!-- docs-test: fragment (why) -->`` is deliberately not runnable
  (a sketch of code inside the reader's own program): it is compiled, not run. Keep these few.

Output samples and diagrams (fences without a language) and yaml are not code.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from processes import free_port, interrupt, start

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "examples" / "README.md"]
FRAGMENT = "<!-- docs-test: fragment"
MAX_FRAGMENTS = 2
QUIET = {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"}
REPO_DIRS = ("scripts/", "examples/", "benchmarks/", "docs/", "dashboards/", "deploy/", "tests/", ".venv/")


@dataclass
class Block:
    path: Path
    line: int
    language: str
    code: str
    fragment: bool

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for path in DOCS:
        lines = path.read_text().splitlines()
        i = 0
        while i < len(lines):
            opening = re.match(r"^```(\w*)\s*$", lines[i])
            if not opening:
                i += 1
                continue
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            fragment = i > 0 and lines[i - 1].strip().startswith(FRAGMENT)
            found.append(Block(path, i + 1, opening[1], "\n".join(lines[i + 1 : end]) + "\n", fragment))
            i = end + 1
    return found


ALL = blocks()


def of(language: str) -> list[Block]:
    return [b for b in ALL if b.language == language]


def environment(**settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return {**env, "PYTHONUNBUFFERED": "1", **QUIET, **settings}


SERVE_ON = """
import runpy, sys
from mcp.server.mcpserver import MCPServer

port = int(sys.argv[2])
run = MCPServer.run
MCPServer.run = lambda self, transport="stdio", **kw: run(self, transport, **{**kw, "port": port})
runpy.run_path(sys.argv[1], run_name="__main__")
"""


class Serving:
    def __init__(self, command: list[str], port: int, env: dict[str, str], log: Path) -> None:
        self.port, self.log = port, log
        with log.open("w") as err:
            self.process = start(command, cwd=ROOT, env=env, stdout=err, stderr=subprocess.STDOUT)

    def __enter__(self) -> Serving:
        deadline = time.monotonic() + 30
        while True:
            assert self.process.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, self.log.read_text()
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.05)

    def __exit__(self, *exc: object) -> None:
        interrupt(self.process)


def run_script(code: str, tmp_path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "block.py"
    script.write_text(code)
    done = subprocess.run(
        [sys.executable, str(script)], cwd=ROOT, env=env or environment(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def is_server(block: Block) -> bool:
    return '.run("streamable-http")' in block.code or '.run(transport="http")' in block.code


def is_client(block: Block) -> bool:
    """A python block calling the doc's server (a bash block's `curl` of it is only checked)."""
    return block.language == "python" and "127.0.0.1:8000" in block.code and not is_server(block)


@pytest.mark.parametrize("block", of("python"), ids=lambda b: b.id)
def test_python_block(block: Block, tmp_path: Path):
    compile(block.code, block.id, "exec")
    if block.fragment or is_client(block):
        return  # a fragment only compiles; a client block runs against its server below
    if "def test_" in block.code:
        (tmp_path / "test_block.py").write_text(block.code)
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_block.py")],
            cwd=tmp_path,
            env=environment(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0 and " passed" in done.stdout and "skipped" not in done.stdout, done.stdout
        return
    if is_server(block):
        serve_and_call(block, tmp_path)
        return
    run_script(block.code, tmp_path)


def serve_and_call(server: Block, tmp_path: Path) -> None:
    """Serve the block, run the same doc's client blocks against it, and see the spans it exported."""
    (tmp_path / "server.py").write_text(server.code)
    port = free_port()
    env = environment(OTEL_TRACES_EXPORTER="console", FASTMCP_PORT=str(port))
    command = [sys.executable, "-c", SERVE_ON, str(tmp_path / "server.py"), str(port)]
    clients = [b for b in ALL if b.path == server.path and is_client(b)]
    log = tmp_path / "server.log"
    with Serving(command, port, env, log):
        for client in clients:
            run_script(client.code.replace("127.0.0.1:8000", f"127.0.0.1:{port}"), tmp_path)
    spans = [json.loads(line) for line in log.read_text().splitlines() if line.startswith('{"name": ')]
    assert any(s["kind"] == "SpanKind.SERVER" for s in spans), log.read_text()
    if clients:
        assert any(s["name"].startswith("tools/call ") for s in spans), log.read_text()


def test_client_blocks_without_a_server_in_their_doc_run_against_the_http_example(tmp_path: Path):
    lonely = [b for b in ALL if is_client(b) and not any(s.path == b.path and is_server(s) for s in ALL)]
    port = free_port()
    command = [sys.executable, "examples/shop_http.py", "--port", str(port)]
    with Serving(command, port, environment(), tmp_path / "shop.log"):
        for block in lonely:
            run_script(block.code.replace("127.0.0.1:8000", f"127.0.0.1:{port}"), tmp_path)


def commands(code: str) -> list[list[str]]:
    """Each command line of a bash block, as words (comments and continuations handled by shlex)."""
    found = []
    for line in code.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if words:
            found.append(words)
    return found


@pytest.mark.parametrize("block", of("bash"), ids=lambda b: b.id)
def test_bash_block(block: Block):
    checked = subprocess.run(["bash", "-n"], input=block.code, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    for words in commands(block.code):
        for word in words:
            if word.startswith(REPO_DIRS):
                assert (ROOT / word).exists(), f"{block.id}: {word} does not exist"
        if words[:3] == ["python", "-m", "mcpobs"] and len(words) > 3:
            helped = subprocess.run(
                [sys.executable, "-m", "mcpobs", *words[3:4], "--help"], capture_output=True, text=True, cwd=ROOT
            )
            assert helped.returncode == 0, f"{block.id}: python -m mcpobs {words[3]}: {helped.stderr}"


def test_fragments_are_few_and_say_why():
    fragments = [b for b in ALL if b.fragment]
    assert len(fragments) <= MAX_FRAGMENTS, [b.id for b in fragments]
    for block in fragments:
        marker = block.path.read_text().splitlines()[block.line - 2]
        assert re.search(r"fragment \(.+\)", marker), f"{block.id}: say why it is a fragment"


def test_every_block_is_seen():
    assert len(of("python")) >= 6 and len(of("bash")) >= 5
