"""mcpobs imports and instruments on the mcp 1.x line, and says which line it found."""

import importlib.metadata
import logging
import subprocess
import sys

import mcpobs
from mcpobs._core import inventory, sdk


def test_the_installed_line_is_1x():
    assert sdk.LINE == 1
    assert importlib.metadata.version("mcp").startswith("1.")
    assert "2026-07-28" in sdk.KNOWN_PROTOCOL_VERSIONS  # what a 2.x client asks a 1.x server for
    assert {"tools/call", "initialize", "server/discover"} <= sdk.CLIENT_REQUESTS


def test_no_row_of_the_2x_line_is_in_play():
    assert not any(inventory.applies(seam) for seam in inventory.INVENTORY if seam.releases == inventory.MCP_2)


def test_importing_mcpobs_imports_nothing_of_the_other_line():
    """Only the installed line's modules load: a 2.x-only SDK module is never imported."""
    code = "import mcpobs, sys; mcpobs.instrument(); print(sorted(m for m in sys.modules if m.startswith('mcp_types')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"


def test_the_2x_subscription_bus_is_a_clear_error(caplog):
    with caplog.at_level(logging.WARNING):
        try:
            mcpobs.ObservedSubscriptionBus  # noqa: B018
        except ImportError as exc:
            assert "mcp 1.x" in str(exc)
        else:
            raise AssertionError("ObservedSubscriptionBus should not exist on mcp 1.x")
