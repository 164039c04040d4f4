"""The tools a server lists, on either SDK line: what `contract snapshot` records.

A standalone FastMCP server (3.x on mcp 1.x, 4.x on 2.x) is listed through `fastmcp.Client`, which
starts its lifespan as serving would. Otherwise mcp 2.x lists through `mcp.Client`, which takes a
URL or a server object; mcp 1.x (1.24 to 1.30) has no `Client`: a URL is listed over a
streamable-HTTP `ClientSession`, a lowlevel `Server` or a FastMCP 1 server through the SDK's
in-memory session, all pages of the listing read.
"""

from __future__ import annotations

import sys
from typing import Any

from mcpobs._core.sdk import LINE

MAX_PAGES = 1000
"""Pages of `tools/list` read at most: a server whose cursor never ends does not hang the command."""


async def list_tools(source: Any) -> list[Any]:
    """The tools `source` (a URL or a server object) lists, as the SDK's `Tool` models."""
    fastmcp = sys.modules.get("fastmcp")
    if fastmcp is not None and isinstance(source, fastmcp.FastMCP):  # FastMCP 3 or 4: its lifespan runs
        async with fastmcp.Client(source) as client:
            return await _pages(client.session) if LINE == 1 else list(await client.list_tools())
    if LINE == 2:
        from mcp import Client

        async with Client(source) as client:
            tools: list[Any] = []
            cursor = None
            for _ in range(MAX_PAGES):
                page = await client.list_tools(cursor=cursor)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
            return tools
    return await _list_tools_sdk1(source)


async def _list_tools_sdk1(source: Any) -> list[Any]:
    from mcp import ClientSession  # pyright: ignore[reportAttributeAccessIssue,reportUnknownVariableType]

    if isinstance(source, str):
        from mcp.client.streamable_http import streamable_http_client  # pyright: ignore[reportAttributeAccessIssue]

        async with (
            streamable_http_client(source) as (read, write, *_),  # pyright: ignore[reportUnknownVariableType]
            ClientSession(read, write) as session,  # pyright: ignore[reportUnknownVariableType]
        ):
            await session.initialize()  # pyright: ignore[reportUnknownMemberType]
            return await _pages(session)
    from mcp.shared.memory import create_connected_server_and_client_session  # pyright: ignore

    async with create_connected_server_and_client_session(source) as session:  # pyright: ignore
        return await _pages(session)


async def _pages(session: Any) -> list[Any]:
    tools: list[Any] = []
    cursor = None
    for _ in range(MAX_PAGES):
        page = await session.list_tools(cursor=cursor) if cursor else await session.list_tools()
        tools.extend(page.tools)
        cursor = page.nextCursor
        if not cursor:
            break
    return tools


def closes_inputs(source: Any) -> str | None:
    """The framework that writes `additionalProperties: false` into every tool's input schema of `source`,
    as "FastMCP 3.4.11", or None: standalone FastMCP 3 and 4 do, whatever the tool says. Only a server object
    tells; a URL does not say which framework serves it."""
    fastmcp = sys.modules.get("fastmcp")
    if fastmcp is None or isinstance(source, str) or not isinstance(source, fastmcp.FastMCP):
        return None
    version = str(getattr(fastmcp, "__version__", ""))
    return f"FastMCP {version}" if version.startswith(("3.", "4.")) else None
