"""The verdict on mcp 1.x servers, every host: sent only when the client asks, and the ask unseen.

An instrumented client asks in a tools/call's `_meta` (`semconv.META_VERDICT_WANTED`); a 1.x
server running mcpobs takes the key out before the handler or the tool sees the request and
writes the verdict on a failed call only when asked (never with `send_verdict=False`), as the
2.x `ServerMiddleware` does. The client here is not instrumented: it asks by hand.
"""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from servers1 import HOSTS
from transports1 import session_over

import mcpobs
from mcpobs import semconv as S
from mcpobs.testing import CapturedTelemetry, capture

pytestmark = pytest.mark.anyio

ASK = {S.META_VERDICT_WANTED: S.VERDICT_VERSION}
CRASH = {"outcome": "server_error", "boundary": "handler", "errorType": "tool_error"}


@contextmanager
def instrumented(**options: Any) -> Iterator[CapturedTelemetry]:
    telemetry = capture(clients=False, **options)
    try:
        yield telemetry
    finally:
        mcpobs.uninstrument()


def _keys(meta: Any) -> str:
    """The `_meta` keys the server's own code reads (the SDK's `RequestParams.Meta`, its extras included)."""
    return json.dumps(sorted(meta.model_dump(exclude_none=True)) if meta is not None else [])


def meta_seeing(host: str) -> Any:
    """A server with `meta_keys` (answers the `_meta` keys its code sees) and `broken` (crashes)."""
    if host == "lowlevel":
        from mcp import types
        from mcp.server.lowlevel.server import Server

        server = Server("meta")

        @server.list_tools()
        async def list_tools() -> list[types.Tool]:
            return [types.Tool(name=name, inputSchema={"type": "object"}) for name in ("meta_keys", "broken")]

        @server.call_tool()
        async def call_tool(name: str, arguments: dict[str, Any]) -> list[types.TextContent]:
            if name == "broken":
                raise RuntimeError("out of stock")
            return [types.TextContent(type="text", text=_keys(server.request_context.meta))]

        return server
    if host == "fastmcp1":
        from mcp.server.fastmcp import Context, FastMCP
    else:
        from fastmcp import Context, FastMCP  # type: ignore[no-redef]
    server = FastMCP("meta")

    @server.tool()
    def meta_keys(ctx: Context) -> str:  # type: ignore[type-arg]
        return _keys(ctx.request_context.meta)

    @server.tool()
    def broken() -> str:
        raise RuntimeError("out of stock")

    return server


@pytest.mark.parametrize("host", HOSTS)
async def test_the_verdict_goes_only_to_a_client_that_asks_and_the_ask_is_unseen(host):
    with instrumented():
        async with session_over("memory", meta_seeing(host)) as session:
            await session.list_tools()
            unasked = await session.call_tool("broken", {})
            asked = await session.call_tool("broken", {}, meta=ASK)
            seen = await session.call_tool("meta_keys", {}, meta={**ASK, "tenant": "t-1"})
            alone = await session.call_tool("meta_keys", {}, meta=ASK)
    assert unasked.isError and S.META_VERDICT not in (unasked.meta or {})
    assert asked.isError and (asked.meta or {}).get(S.META_VERDICT) == CRASH
    assert json.loads(seen.content[0].text) == ["tenant"]  # type: ignore[union-attr]  # the other keys stay
    assert json.loads(alone.content[0].text) == []  # type: ignore[union-attr]
    assert S.META_VERDICT not in (seen.meta or {})  # an ok call: nothing to say


@pytest.mark.parametrize("host", HOSTS)
async def test_send_verdict_false_sends_none_even_when_asked_and_still_hides_the_ask(host):
    with instrumented(send_verdict=False):
        async with session_over("memory", meta_seeing(host)) as session:
            await session.list_tools()
            asked = await session.call_tool("broken", {}, meta=ASK)
            seen = await session.call_tool("meta_keys", {}, meta=ASK)
    assert asked.isError and S.META_VERDICT not in (asked.meta or {})
    assert json.loads(seen.content[0].text) == []  # type: ignore[union-attr]
