"""The seam inventory: every row resolves on the installed releases, and it is the whole list.

A row that fails here names the seam a release moved (give the row an alternate, or a
version gate); the rest of the instrumentation keeps working, with one warning.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from importlib.metadata import version

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

import mcpobs
from mcpobs._core import inventory, sdk
from mcpobs._core.inventory import INVENTORY, Seam
from mcpobs._core.patches import Changes, Patch

_INSTALLED = [seam for seam in INVENTORY if inventory.applies(seam)]
"""The rows of the releases installed here: each venv of the suite resolves its own line's."""

_LINE = inventory.MCP_2 if sdk.LINE == 2 else inventory.MCP_1
"""The installed mcp line's gate (scripts/test-sdk1 runs this file on mcp 1.x too)."""


@pytest.mark.parametrize("seam", _INSTALLED, ids=lambda seam: seam.where)
def test_every_row_resolves_on_the_installed_release(seam: Seam):
    installed = version(seam.package)
    assert f"{seam.package} {installed}" in seam.known_on, f"{seam.where}: not known on {seam.package} {installed}"
    assert inventory.defined(seam), f"inventory row {seam.where} ({seam.job}) does not resolve on {installed}"


def test_every_row_is_gated_to_releases_that_are_tested():
    """A gate no tested release falls in would be a row nothing ever checks."""
    untested = [seam.where for seam in INVENTORY if not seam.known_on]
    assert untested == []
    assert {seam.package for seam in _INSTALLED} >= {"mcp"}  # this venv resolves the installed line's rows


def test_a_row_of_another_line_is_silent_and_never_wrapped(caplog):
    """mcp 1.x's seams and 2.x's are rows side by side: only the installed line's are touched."""
    elsewhere = Seam("mcp.server.lowlevel.server:Server._no_such_seam", "wrap", "test", ("mcp 0.9",), releases="<1")
    assert not inventory.applies(elsewhere)
    with caplog.at_level(logging.WARNING, logger="mcpobs"):
        assert inventory.resolve(elsewhere) is None
    assert caplog.records == []
    changes = Changes()
    changes.wrap([Patch.of(elsewhere, lambda wrapped, instance, args, kwargs: wrapped(*args, **kwargs))])
    assert changes.wrapped == []


def _import_every_framework() -> None:
    """A framework's rows are wrapped when it is imported; import them all, so every row is in play."""
    import importlib

    for seam in _INSTALLED:
        importlib.import_module(seam.module)


def test_instrument_wraps_exactly_the_inventorys_wrap_rows(mcpobs_telemetry):
    _import_every_framework()
    mcpobs.instrument()
    changes = mcpobs.MCPInstrumentor()._changes
    assert changes is not None
    wrapped = {
        (getattr(a.owner, "__qualname__", getattr(a.owner, "__name__", "")), a.attribute) for a in changes.wrapped
    }
    rows = set()
    for seam in _INSTALLED:
        if seam.kind == "wrap":
            owner, attribute = inventory.resolve(seam)  # type: ignore[misc]
            rows.add((getattr(owner, "__qualname__", getattr(owner, "__name__", "")), attribute))
    assert wrapped == rows


def test_a_read_row_that_moved_is_seen():
    """The check above can fail: an attribute the class never sets is not `defined`."""
    gone = Seam("mcp.server.session:ServerSession._connection_renamed", "read", "test", ("mcp 2.3.0",), releases=_LINE)
    assert not inventory.defined(gone)
    assert inventory.defined(inventory.SESSION_CONNECTION if sdk.LINE == 2 else inventory.SERVER1_TOOL_CACHE)


def test_declared_instruments_match_what_is_tested():
    (declared,) = mcpobs.MCPInstrumentor().instrumentation_dependencies()
    requirement = Requirement(declared)
    assert requirement.name == "mcp"
    assert all(requirement.specifier.contains(v) for v in inventory.MCP_TESTED)
    assert version("mcp") in inventory.MCP_TESTED
    fastmcp = Requirement("fastmcp " + inventory.SUPPORTED["fastmcp"])
    assert all(fastmcp.specifier.contains(v) for v in inventory.FASTMCP_TESTED)
    # This venv's (the dev pin, or scripts/test-fastmcp-4.1's); FastMCP 4.1 and 4.2 require mcp 2.3,
    # so the 2.0-2.2 venvs (scripts/test-sdk2) have none.
    if sdk.LINE == 1 or Version(version("mcp")) >= Version("2.3"):
        assert version("fastmcp") in inventory.FASTMCP_TESTED


def test_the_scripts_pin_the_newest_tested_pydocket():
    """pydocket's gate is closed above: the venvs that run the task rows pin its newest tested release,
    so a pydocket published during a CI run cannot leave those rows unapplied (0.28.0 did)."""
    from pathlib import Path

    scripts = Path(__file__).parent.parent / "scripts"
    newest = inventory.PYDOCKET_TESTED[-1]
    assert f'"pydocket=={newest}"' in (scripts / "test-tasks").read_text()
    assert f"PYDOCKET={newest}" in (scripts / "mcp-venv").read_text()
    assert all(Requirement(f"pydocket {inventory.PYDOCKET}").specifier.contains(v) for v in inventory.PYDOCKET_TESTED)


def test_a_release_outside_the_tested_series_is_named_with_the_tested_ones():
    """FastMCP 4.0.11 passes the FastMCP tests, but is not tested here each run: instrument() says so."""
    message = inventory.untested("fastmcp", "4.0.11")
    assert message is not None
    assert "fastmcp 4.0.11 is installed" in message and "4.1.7, 4.2.3" in message
    assert inventory.untested("fastmcp", "4.1.2") is None  # a tested minor series
    assert inventory.untested("fastmcp", "4.2.9") is None
    assert inventory.untested("fastmcp", "4.3.0") is not None
    assert inventory.untested("mcp", "2.3.4") is None
    assert inventory.untested("mcp", "2.1.1") is None  # the 2.x line is tested from 2.0.1 to 2.3.0
    assert inventory.untested("mcp", "2.4.0") is not None


def test_an_observed_package_outside_its_gate_is_named_with_the_release_to_pin():
    """A pydocket newer than the rows' gate leaves the task legs unrecorded: instrument() says so."""
    message = inventory.outside_gate("pydocket", Version("0.29.0"))
    assert message is not None and "pydocket 0.29.0 is installed" in message
    assert f"pip install 'pydocket=={inventory.PYDOCKET_TESTED[-1]}'" in message
    assert inventory.outside_gate("pydocket", Version("0.28.1")) is None
    assert inventory.outside_gate("uvicorn", None) is None  # not installed
    assert inventory.outside_gate("gunicorn", Version("28.0")) is not None


def test_the_tested_releases_installed_here_warn_of_nothing(caplog):
    inventory._version_warned.clear()
    with caplog.at_level("WARNING", logger="mcpobs"):
        inventory.warn_untested()  # what instrument() runs first, on this venv's real metadata
    assert not [r for r in caplog.records if "is installed, but mcpobs is tested" in r.getMessage()]


@pytest.mark.anyio
async def test_a_moved_seam_warns_once_and_the_rest_still_works(mcpobs_telemetry, caplog):
    moved = Seam(
        "mcp.server.session:ServerSession.renamed_in_a_later_release", "wrap", "test", ("mcp 2.3.0",), releases=_LINE
    )
    calls = []

    def counting(wrapped, instance, args, kwargs):
        calls.append(1)
        return wrapped(*args, **kwargs)

    from mcp.server.lowlevel.server import Server

    caplog.set_level(logging.WARNING, logger="mcpobs")
    for _ in range(2):
        changes = Changes()
        if sdk.LINE == 2:
            changes.wrap([Patch.of(moved, counting), Patch.of(inventory.HANDLER_OWNER, counting)])
            Server("s").get_request_handler("tools/call")
        else:
            changes.wrap([Patch.of(moved, counting), Patch.of(inventory.SERVER1_TOOL_ERROR_RESULT, counting)])
            Server("s")._make_error_result("the seam that did resolve")
        changes.undo()
    warnings = [r for r in caplog.records if moved.where in r.getMessage()]
    assert len(warnings) == 1, "a moved seam is warned about once per process"
    assert len(calls) == 2, "the seams that did resolve were wrapped both times"


def test_instrument_does_not_import_fastmcp_and_wraps_it_when_it_is_imported():
    client = "_negotiate" if sdk.LINE == 2 else None  # FastMCP 3's client seams are the 1.x client's to check
    script = """
import sys, wrapt, mcpobs
mcpobs.instrument()
assert "fastmcp" not in sys.modules, "instrument() imported fastmcp"
from fastmcp.server.server import FastMCP
from fastmcp.client.client import Client
assert isinstance(vars(FastMCP)["call_tool"], wrapt.FunctionWrapper)
assert {client!r} is None or isinstance(vars(Client)[{client!r}], wrapt.FunctionWrapper)
mcpobs.uninstrument()
assert not isinstance(vars(FastMCP)["call_tool"], wrapt.FunctionWrapper)
print("ok")
"""
    done = subprocess.run(
        [sys.executable, "-c", script.replace("{client!r}", repr(client))], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def _rows_between_sdk1_markers() -> set[str]:
    """The rows assigned between the inventory's `# <sdk1>` and `# </sdk1>` lines."""
    import ast
    from pathlib import Path

    source = Path(inventory.__file__).read_text()
    inside, spans, start = False, [], 0
    for number, line in enumerate(source.splitlines(), 1):
        if line == "# <sdk1>":
            assert not inside, f"line {number}: a block opens inside a block"
            inside, start = True, number
        elif line == "# </sdk1>":
            assert inside, f"line {number}: a block closes that never opened"
            inside = False
            spans.append((start, number))
    assert not inside, "the last `# <sdk1>` block is never closed"
    return {
        target.id
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign) and any(a <= node.lineno <= b for a, b in spans)
        for target in node.targets
        if isinstance(target, ast.Name) and isinstance(getattr(inventory, target.id, None), Seam)
    }


def test_the_sdk1_blocks_hold_exactly_the_1x_lines_rows():
    """Retiring mcp 1.x deletes the marked blocks (scripts/check-without-sdk1): none of its rows may
    sit outside them, and no row of another line inside them."""
    line1 = {"mcp 1.30.0", "mcp 1.24.0", "fastmcp 3.4.11"}
    rows_1x = {name for name, row in vars(inventory).items() if isinstance(row, Seam) and set(row.known_on) <= line1}
    assert _rows_between_sdk1_markers() == rows_1x
