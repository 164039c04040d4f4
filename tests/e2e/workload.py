"""A client's day against the shop: every outcome, progress, prompts, resources, a listen stream.

Run by the end-to-end tests as ``workload.py URL`` with only standard OTEL_* variables set:
`mcpobs.instrument()` configures OpenTelemetry from them. Two passes a little apart, so
counters grow between metric exports and rates are not zero. Each pass is also refused
twice by the shop's bearer-protected billing endpoint (a token it does not know: 401; a
token without the scope: 403), refused once by a tool (`PermissionError`), and finds one
server down (a refused connection): access refused and an outage, on real data.
"""

import sys
from contextlib import suppress

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from processes import free_port

import mcpobs

mcpobs.instrument()


async def on_elicit(ctx, params):
    return types.ElicitResult(action="accept", content={"approved": True})


async def on_roots(ctx):
    return types.ListRootsResult(roots=[types.Root(uri="file:///srv/shop")])


async def on_progress(progress, total, message):
    pass


async def one_pass(client: Client, billing_url: str) -> None:
    await client.list_tools()
    for _ in range(3):
        await client.call_tool("get_order_status", {"order_id": "O-1873"})  # ok
    await client.call_tool("get_order_status", {"order_id": "O-9999"})  # tool_error
    await client.call_tool("quote_refund", {"order_id": "O-1873", "amount_cents": -1})  # server_error
    await client.call_tool("billing__create_invoice", {})  # client_error at discovery, tool name unbounded
    await client.call_tool("quote_refund", {"order_id": "O-1873", "amount_cents": "lots"})  # client_error, arguments
    with anyio.move_on_after(0.5):
        await client.call_tool("wait_for_stock", {"sku": "KG-1031"})  # cancelled
    await client.call_tool("confirm_cancel", {"order_id": "O-2001"})  # pending_input twice, then ok
    await client.call_tool("approve_refund", {"order_id": "O-1873"})  # pending_input, then ok
    await client.call_tool("slow_export", {"rows": 5}, progress_callback=on_progress)  # progress
    await client.call_tool("slow_export", {"rows": 230}, progress_callback=on_progress)  # over the progress cap
    await client.list_tools()  # the client now holds this release's check_stock schema
    await client.call_tool("check_stock", {"sku": "KG-1031"})
    await client.call_tool("release_check_stock", {})  # a rolling release while connected
    with suppress(RuntimeError):  # stale: the client validates against the schema it listed
        await client.call_tool("check_stock", {"sku": "KG-1031"})
    await client.get_prompt("refund_reply", {"customer": "Ada"})
    with suppress(MCPError):  # the server records client_error at discovery; its client gets -32603, a server_error
        await client.get_prompt("no_such_prompt", {})
    await client.read_resource("shop://catalog")
    assert (await client.call_tool("override_refund_limit", {"order_id": "O-1873"})).is_error  # PermissionError
    await refused_access(billing_url)
    await refused(Client(f"http://127.0.0.1:{free_port()}/mcp"))  # an outage: nothing listens there


async def refused(client: Client) -> None:
    """Connecting fails (refused access, or no server): a session here would be a broken workload."""
    try:
        async with client:
            pass
    except Exception:
        return
    raise AssertionError("connected where a refusal was expected")


async def refused_access(billing_url: str) -> None:
    # test_client_failures.StaticVerifier: a token it does not know (401), one without billing:write (403)
    for token in ("stolen", "staff-token"):
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
            await refused(Client(streamable_http_client(billing_url, http_client=http)))


async def restock_and_hear_it(client: Client, stream) -> None:
    await client.call_tool("restock", {})
    heard = 0
    with anyio.fail_after(10):
        async for _ in stream:
            heard += 1
            if heard == 2:  # tools_list_changed and resource_updated
                return


async def main(url: str) -> None:
    async with (
        Client(url, elicitation_callback=on_elicit, list_roots_callback=on_roots) as client,
        client.listen(tools_list_changed=True, resource_subscriptions=["shop://catalog"]) as stream,
    ):
        for _ in range(2):
            await one_pass(client, url.removesuffix("/mcp") + "/billing/mcp")
            await restock_and_hear_it(client, stream)
            await anyio.sleep(2.5)  # at least two metric exports between the passes, the stream open


anyio.run(main, sys.argv[1])
