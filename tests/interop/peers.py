"""The MCP peers nobody here wrote, installed by `scripts/install-peers` from npm at pinned versions.

- `@modelcontextprotocol/server-everything`: the TypeScript SDK's reference server, over stdio
  or Streamable HTTP; it speaks revisions up to 2025-11-25.
- `@modelcontextprotocol/inspector`: its command-line mode (`--cli`) is a client that sends no
  trace context of its own unless told to.

Without them the tests skip with instructions, except under `CI=true`, where a missing peer is a
failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from processes import free_port, stop, wait_for_port

HERE = Path(__file__).parent
PINNED: dict[str, str] = json.loads((HERE / "node" / "package.json").read_text())["dependencies"]
EVERYTHING = "@modelcontextprotocol/server-everything"
INSPECTOR = "@modelcontextprotocol/inspector"


def node_dir() -> Path:
    return Path(os.environ.get("MCPOBS_NODE_DIR") or Path.home() / ".cache" / "mcpobs" / "node")


def _installed(package: str) -> str | None:
    try:
        return json.loads((node_dir() / "node_modules" / package / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def require_peers() -> Path:
    """The folder holding the pinned peers; skips (fails under CI=true) when one is missing."""
    wrong = {name: _installed(name) for name, version in PINNED.items() if _installed(name) != version}
    if wrong:
        found = ", ".join(f"{name} is {have or 'missing'} (pinned {PINNED[name]})" for name, have in wrong.items())
        message = f"npm peers not installed in {node_dir()}: {found}; run scripts/install-peers"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return node_dir()


def everything_js() -> str:
    return str(require_peers() / "node_modules" / EVERYTHING / "dist" / "index.js")


def inspector_js() -> str:
    package = require_peers() / "node_modules" / INSPECTOR
    bin_path = json.loads((package / "package.json").read_text())["bin"]["inspector"]
    return str(package / bin_path)


@contextmanager
def everything_http() -> Iterator[str]:
    """server-everything over Streamable HTTP in a node process; yields its endpoint URL."""
    port = free_port()
    proc = subprocess.Popen(
        ["node", everything_js(), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc, "server-everything", timeout=20)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)


def everything_stdio() -> Any:
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(command="node", args=[everything_js(), "stdio"], env=dict(os.environ))


def inspector(target: list[str], *args: str, timeout: float = 60) -> Any:
    """Run the Inspector's command-line mode once; returns its JSON answer (or raises on failure).

    A tool result with `isError: true` is an answer (the Inspector exits 5 for it), not a failure.

    `target` is a URL, or a command and its arguments (stdio); it comes first because
    `--tool-arg` swallows whatever follows it.
    """
    done = subprocess.run(
        ["node", inspector_js(), "--cli", *target, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=node_dir(),
    )
    if done.returncode not in (0, _TOOL_IS_ERROR):
        raise InspectorFailed(done.returncode, done.stdout, done.stderr)
    return json.loads(done.stdout)


_TOOL_IS_ERROR = 5


class InspectorFailed(Exception):
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        super().__init__(f"inspector exited {code}: {stdout[-2000:]} {stderr[-2000:]}")
        self.code = code
        self.stdout = stdout
        self.stderr = stderr


def python_server(*args: str) -> list[str]:
    """The command that starts tests/interop/stdio_server.py (an instrumented shop over stdio)."""
    return [sys.executable, str(HERE / "stdio_server.py"), *args]
