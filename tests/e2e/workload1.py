"""A client's day against the FastMCP 1 shop, with mcp 1.x's `ClientSession` (not instrumented: the server's dashboard is the subject).

Run with the mcp 1.x venv's Python as ``workload1.py URL``. Every outcome the server's
dashboard shows: ok, tool errors, a crash, an unknown tool, bad arguments, a refused caller,
progress (past the cap too), a cancellation (1.x clients send none themselves: it is sent by
hand), a stale schema fingerprint, a resource update delivered, and two sessions.
"""

import sys
from contextlib import suppress

import anyio
import httpx
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError

from mcpobs import semconv as S


async def on_progress(progress, total, message):
    pass


async def day(url: str) -> None:
    async with (
        httpx.AsyncClient(timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await session.list_tools()
        for order in ("O-1873", "O-2001", "O-1873", "O-9999"):
            await session.call_tool("get_order_status", {"order_id": order})
        await session.call_tool("quote_refund", {"order_id": "O-1873", "amount_cents": -1})  # a crash
        await session.call_tool("quote_refund", {"order_id": "O-1873", "amount_cents": "lots"})  # bad arguments
        await session.call_tool("billing__create_invoice", {})  # an unknown tool
        await session.call_tool("override_refund_limit", {"order_id": "O-1873"})  # access refused
        await session.call_tool("slow_export", {"rows": 5}, progress_callback=on_progress)
        await session.call_tool("flood", {"reports": 230}, progress_callback=on_progress)  # over the cap
        await session.call_tool("restock", {})  # a resource update delivered
        stale = {S.META_SCHEMA_FINGERPRINT: "0000000000000000"}
        await session.call_tool("get_order_status", {"order_id": "O-1873"}, meta=stale)
        await session.get_prompt("refund_reply", {"customer": "Ada"})
        request_id = session._request_id
        async with anyio.create_task_group() as tg:

            async def wait() -> None:
                with suppress(McpError):  # "Request cancelled"
                    await session.call_tool("wait_for_stock", {"sku": "KG-1031"})

            tg.start_soon(wait)
            await anyio.sleep(0.5)
            cancel = types.CancelledNotification(params=types.CancelledNotificationParams(requestId=request_id))
            await session.send_notification(types.ClientNotification(cancel))


async def main(url: str) -> None:
    for _ in range(2):
        await day(url)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
    print("workload done")
