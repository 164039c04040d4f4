"""The 1.x client's inventory rows resolve on the installed mcp 1.x and FastMCP 3 releases."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from mcpobs._core import inventory
from mcpobs._core.inventory import INVENTORY, Seam

_CLIENT = [
    seam
    for seam in INVENTORY
    if inventory.applies(seam) and seam.where.startswith(("mcp.client", "mcp.shared", "fastmcp.client"))
]


def test_the_1x_client_has_its_rows():
    assert len(_CLIENT) >= 20
    assert {seam.releases for seam in _CLIENT} <= {inventory.MCP_1, inventory.FASTMCP_3, ">=1.30,<2"}


@pytest.mark.parametrize("seam", _CLIENT, ids=lambda seam: seam.where)
def test_every_client_row_resolves_on_the_installed_release(seam: Seam):
    installed = version(seam.package)
    assert f"{seam.package} {installed}" in seam.known_on, f"{seam.where}: not known on {seam.package} {installed}"
    assert inventory.defined(seam), f"inventory row {seam.where} ({seam.job}) does not resolve on {installed}"
