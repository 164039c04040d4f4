"""The HTTP boundary changes nothing a handler sees: the user's per-request contextvars still arrive."""

from __future__ import annotations

from contextvars import ContextVar

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import MCPServer
from transports import serve_http

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

TENANT: ContextVar[str] = ContextVar("tenant", default="nobody")


class TenantMiddleware:
    """The user's own pure ASGI middleware: one tenant per request, from a header."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        tenant = dict(scope["headers"]).get(b"x-tenant", b"nobody").decode()
        token = TENANT.set(tenant)
        try:
            await self.app(scope, receive, send)
        finally:
            TENANT.reset(token)


def tenant_server() -> MCPServer:
    mcp = MCPServer("tenants")

    @mcp.tool()
    async def whoami() -> str:
        """Which tenant is this request for?"""
        await anyio.sleep(0.01)  # let the other tenant's requests interleave
        return TENANT.get()

    return mcp


async def ask(base_url: str, mode: str, tenant: str, seen: dict[str, list[str]]) -> None:
    http = httpx2.AsyncClient(headers={"x-tenant": tenant})
    async with http, Client(streamable_http_client(base_url + "/mcp", http_client=http), mode=mode) as client:
        for _ in range(3):
            result = await client.call_tool("whoami", {})
            seen[tenant].append(result.content[0].text)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("wrap", ["add_middleware", "around_the_app"])
async def test_a_contextvar_set_by_user_middleware_reaches_that_requests_tool(mcpobs_telemetry, mode, wrap):
    app = tenant_server().streamable_http_app()
    if wrap == "add_middleware":
        app.add_middleware(TenantMiddleware)
        served = app
    else:
        served = TenantMiddleware(app)
    seen: dict[str, list[str]] = {"acme": [], "globex": []}
    with serve_http(served) as base:
        async with anyio.create_task_group() as tg:
            for tenant in seen:
                tg.start_soon(ask, base, mode, tenant, seen)
    assert seen == {"acme": ["acme"] * 3, "globex": ["globex"] * 3}
    # and the calls were observed as usual
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, {S.GEN_AI_TOOL_NAME: "whoami", S.OUTCOME: "ok"}) == 6
