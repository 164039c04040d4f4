"""The mcp 1.x line's hosts: its lowlevel `Server`, FastMCP 1 (`mcp.server.fastmcp`) and FastMCP 3.

Reached only through `hosts()`, from the line's server setup (`_server/sdk1/setup.py`). Deleting
this folder (with `_server/sdk1/`, `_client/sdk1/` and the inventory's `# <sdk1>` blocks) retires
the line (scripts/check-without-sdk1).
"""

from __future__ import annotations

from mcpobs._hosts.host import Host


def hosts() -> tuple[tuple[Host, ...], Host]:
    """mcp 1.x's hosts, most specific first, and its lowlevel `Server`'s."""
    from mcpobs._hosts.sdk1.fastmcp1 import FastMCP1Host
    from mcpobs._hosts.sdk1.fastmcp3 import FastMCP3Host
    from mcpobs._hosts.sdk1.lowlevel import Lowlevel1Host

    return (FastMCP1Host(), FastMCP3Host()), Lowlevel1Host()
