"""Host adapters: one per server framework, saying where mcpobs finds what it records.

A *host* is the framework that owns a server's registry, tool-run path, app and transports:
the SDK's lowlevel `Server` (`host.Host`, the base: it owns nothing beyond its handlers),
the SDK's `MCPServer` (`mcpserver.py`), FastMCP 4 (`fastmcp.py`); on mcp 1.x its lowlevel
`Server`, FastMCP 1 (`mcp.server.fastmcp`) and FastMCP 3, in the line's folder `sdk1/` (its
`hosts()`, imported by `_server/sdk1/setup.py` on that line only). Each adapter answers the
same questions: which framework object built this lowlevel `Server`; where its tool and
prompt names come from (bounded, named from the first call); where a tool's failure is told
apart; where progress is reported; which seams label its transports (stdio, its HTTP app);
what it offers (the session line). Adding the next framework is one new adapter here, with
its rows in `_core/inventory.py`.
"""

from __future__ import annotations

from mcpobs._hosts.fastmcp import FastMCPHost
from mcpobs._hosts.host import Host
from mcpobs._hosts.mcpserver import MCPServerHost

HOSTS: tuple[Host, ...] = (MCPServerHost(), FastMCPHost())
"""The frameworks, most specific first; a lowlevel `Server` none of them owns is served by `LOWLEVEL`."""

LOWLEVEL = Host()


def owning(server: object) -> tuple[Host, object | None]:
    """The host whose framework built this lowlevel `Server`, and the framework's object (or None)."""
    for host in HOSTS:
        owner = host.owner_of(server)
        if owner is not None:
            return host, owner
    return LOWLEVEL, None


def framework_of(obj: object) -> Host | None:
    """The host whose framework object `obj` is (an `MCPServer`, a `FastMCP`), or None."""
    for host in HOSTS:
        if host.is_owner(obj):
            return host
    return None


def owning_in(hosts: tuple[Host, ...], lowlevel: Host, server: object) -> tuple[Host, object]:
    """The host among `hosts` whose framework built this lowlevel `Server`, and its object (the
    `Server` itself, with `lowlevel`, when none did)."""
    for host in hosts:
        owner = host.owner_of(server)
        if owner is not None:
            return host, owner
    return lowlevel, server


__all__ = ["HOSTS", "LOWLEVEL", "Host", "framework_of", "owning", "owning_in"]
