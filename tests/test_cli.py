"""`python -m mcpobs`: a version, a described page per command, and one line (exit 2) for each mistake."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from processes import free_port

from mcpobs._version import DISTRIBUTION, __version__

COMMANDS = ["demo", "show", "reference", "jaeger-url", "conventions", "tail-sampling", "contract"]


def mcpobs(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return subprocess.run(
        [sys.executable, "-m", "mcpobs", *args],
        capture_output=True,
        text=True,
        env={**clean, **env},
        cwd=cwd,
        timeout=60,
    )


def refused(run: subprocess.CompletedProcess[str], prefix: str) -> str:
    """The one line a mistake gets: on stderr, exit status 2, no traceback."""
    assert run.returncode == 2, (run.returncode, run.stdout, run.stderr)
    assert run.stdout == ""
    (line,) = run.stderr.splitlines()
    assert line.startswith(prefix), line
    return line


def test_version_names_the_release_and_the_distribution():
    run = mcpobs("--version")
    assert run.returncode == 0 and run.stdout.startswith(f"mcpobs {__version__} ({DISTRIBUTION}, "), run.stdout
    assert len(run.stdout.splitlines()) == 1


@pytest.mark.parametrize("command", [*COMMANDS, "contract snapshot", "contract diff"])
def test_every_command_has_a_help_page_with_a_description(command):
    run = mcpobs(*command.split(), "--help")
    assert run.returncode == 0, run.stderr
    usage, _, rest = run.stdout.partition("\n\n")
    assert usage.startswith(f"usage: mcpobs {command}")
    description = rest.split("\n\n")[0]
    assert not description.startswith(("options:", "positional arguments:")), run.stdout
    assert len(description.split()) >= 8, description  # a sentence, not a title


def test_the_top_help_lists_every_command():
    out = mcpobs("--help").stdout
    assert all(f"    {command}" in out for command in COMMANDS), out


def test_contract_snapshot_of_a_module_that_does_not_import(tmp_path):
    line = refused(mcpobs("contract", "snapshot", "no_such_shop:mcp", cwd=tmp_path), "mcpobs contract snapshot: ")
    assert "cannot import 'no_such_shop'" in line and "PYTHONPATH" in line


def test_contract_snapshot_of_a_missing_attribute(tmp_path):
    (tmp_path / "shop_module.py").write_text("server = None\n")
    line = refused(mcpobs("contract", "snapshot", "shop_module:mcp", cwd=tmp_path), "mcpobs contract snapshot: ")
    assert line.endswith("shop_module:mcp: module 'shop_module' has no 'mcp'")


def test_contract_snapshot_of_something_that_is_no_target(tmp_path):
    line = refused(mcpobs("contract", "snapshot", "shop", cwd=tmp_path), "mcpobs contract snapshot: ")
    assert "name a server as module:attribute" in line


def test_contract_snapshot_of_a_dead_url():
    url = f"http://127.0.0.1:{free_port()}/mcp"
    line = refused(mcpobs("contract", "snapshot", url), "mcpobs contract snapshot: ")
    assert f"could not list the tools of the server at {url}: ConnectError" in line


def test_contract_diff_of_a_missing_file(tmp_path):
    (tmp_path / "old.json").write_text(json.dumps({"tools": []}))
    line = refused(mcpobs("contract", "diff", "old.json", "new.json", cwd=tmp_path), "mcpobs contract diff: ")
    assert (
        line
        == "mcpobs contract diff: new.json: no such file (give a file `mcpobs contract snapshot` wrote, or a server)"
    )


@pytest.mark.parametrize(("content", "says"), [("{not json", "not JSON"), ("[1, 2]", "not a snapshot")])
def test_contract_diff_of_a_file_that_is_no_snapshot(tmp_path, content, says):
    (tmp_path / "old.json").write_text(content)
    (tmp_path / "new.json").write_text(json.dumps({"tools": []}))
    line = refused(mcpobs("contract", "diff", "old.json", "new.json", cwd=tmp_path), "mcpobs contract diff: old.json: ")
    assert says in line


def test_contract_diff_of_a_bad_module_and_a_dead_url(tmp_path):
    (tmp_path / "old.json").write_text(json.dumps({"tools": []}))
    bad = refused(mcpobs("contract", "diff", "old.json", "no_such_shop:mcp", cwd=tmp_path), "mcpobs contract diff: ")
    assert "cannot import 'no_such_shop'" in bad
    url = f"http://127.0.0.1:{free_port()}/mcp"
    dead = refused(mcpobs("contract", "diff", "old.json", url, cwd=tmp_path), "mcpobs contract diff: ")
    assert f"the server at {url}" in dead


def test_contract_diff_against_a_server_taken_now(tmp_path):
    (tmp_path / "shop_now.py").write_text(
        "from mcp.server.mcpserver import MCPServer\nmcp = MCPServer('shop')\n\n"
        "@mcp.tool()\ndef check_stock(sku: str) -> int:\n    return 1\n"
    )
    (tmp_path / "old.json").write_text(json.dumps({"tools": []}))
    run = mcpobs("contract", "diff", "old.json", "shop_now:mcp", cwd=tmp_path)
    assert (run.returncode, run.stdout.splitlines()[0]) == (0, "additive: check_stock: tool added"), run.stderr


def test_jaeger_url_without_a_service_name_says_so_instead_of_unknown_service():
    line = refused(mcpobs("jaeger-url"), "mcpobs jaeger-url: ")
    assert "pass --service NAME, or set OTEL_SERVICE_NAME" in line


@pytest.mark.parametrize(
    "env", [{"OTEL_SERVICE_NAME": "shop"}, {"OTEL_RESOURCE_ATTRIBUTES": "service.name=shop,team=orders"}]
)
def test_jaeger_url_takes_the_service_name_the_spans_carry(env):
    run = mcpobs("jaeger-url", **env)
    assert run.returncode == 0, run.stderr
    assert "query.service_name=shop&" in run.stdout and "unknown_service" not in run.stdout
