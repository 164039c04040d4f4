"""The shop of the main suite, on each mcp 1.x host: the lowlevel `Server`, FastMCP 1, FastMCP 3.

Each reaches every outcome the server truth tests ask for: `get_order_status` (ok, or a
deliberate tool error for an unknown order), `quote_refund` (a crash for a negative amount;
bad arguments for a non-integer), `slow_export` (progress), `wait_for_stock` (blocks: a call to
cancel), `approve_refund` (asks its client: elicitation), `draft_apology` (sampling),
`restock` (sends `notifications/resources/updated`), the prompt `refund_reply` and the
resource `shop://catalog`. The lowlevel server also takes `resources/subscribe`.
"""

from typing import Any

import anyio
from mcp import types

ORDERS = {"O-1873": "delivered", "O-2001": "shipped"}
HOSTS = ["lowlevel", "fastmcp1", "fastmcp3"]
CATALOG = "shop://catalog"
ELICIT_SCHEMA = {"type": "object", "properties": {"approved": {"type": "boolean"}}, "required": ["approved"]}


def create(host: str, name: str = "shop", version: str = "1.0.0") -> Any:
    """The shop on `host` (one of HOSTS)."""
    return {"lowlevel": lowlevel_shop, "fastmcp1": fastmcp1_shop, "fastmcp3": fastmcp3_shop}[host](name, version)


def lowlevel(server: Any) -> Any:
    """The lowlevel `Server` a shop serves through (what `create_connected_server_and_client_session` runs)."""
    return getattr(server, "_mcp_server", server)


# -- the lowlevel Server ---------------------------------------------------------------------------


def lowlevel_shop(name: str = "shop", version: str = "1.0.0") -> Any:
    from mcp.server.lowlevel.server import Server, request_ctx

    server = Server(name, version=version)
    subscribers: list[Any] = []
    tools = [
        types.Tool(
            name="get_order_status",
            description="Look up one order's status.",
            inputSchema={"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
        ),
        types.Tool(
            name="quote_refund",
            description="Quote a refund; crashes on a bug for negative amounts.",
            inputSchema={
                "type": "object",
                "properties": {"order_id": {"type": "string"}, "amount_cents": {"type": "integer"}},
                "required": ["order_id", "amount_cents"],
            },
        ),
        types.Tool(name="slow_export", inputSchema={"type": "object", "properties": {"rows": {"type": "integer"}}}),
        types.Tool(name="wait_for_stock", inputSchema={"type": "object", "properties": {"sku": {"type": "string"}}}),
        types.Tool(
            name="approve_refund", inputSchema={"type": "object", "properties": {"order_id": {"type": "string"}}}
        ),
        types.Tool(
            name="draft_apology", inputSchema={"type": "object", "properties": {"order_id": {"type": "string"}}}
        ),
        types.Tool(name="restock", inputSchema={"type": "object", "properties": {}}),
    ]

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return tools

    @server.call_tool()
    async def call_tool(tool: str, arguments: dict[str, Any]) -> Any:
        ctx = request_ctx.get()
        if tool == "get_order_status":
            order = arguments["order_id"]
            if order not in ORDERS:
                return types.CallToolResult(
                    content=[types.TextContent(type="text", text=f"Unknown order {order}")], isError=True
                )
            return [types.TextContent(type="text", text=ORDERS[order])]
        if tool == "quote_refund":
            if arguments["amount_cents"] < 0:
                raise RuntimeError("refund ledger corrupted")
            return [types.TextContent(type="text", text=f"refund of {arguments['amount_cents']}")]
        if tool == "slow_export":
            rows = arguments.get("rows", 5)
            token = ctx.meta.progressToken if ctx.meta else None
            for i in range(rows):
                if token is not None:
                    await ctx.session.send_progress_notification(token, i + 1, rows, f"exported {i + 1}/{rows}")
            return [types.TextContent(type="text", text="done")]
        if tool == "wait_for_stock":
            await anyio.sleep(60)
            return [types.TextContent(type="text", text="in stock")]
        if tool == "approve_refund":
            answer = await ctx.session.elicit_form(
                f"Approve the refund for {arguments.get('order_id')}?", ELICIT_SCHEMA, ctx.request_id
            )
            return [types.TextContent(type="text", text=f"approved: {(answer.content or {}).get('approved')}")]
        if tool == "draft_apology":
            return [types.TextContent(type="text", text=await _sample(ctx.session))]
        if tool == "restock":
            for session in subscribers:
                await session.send_resource_updated(CATALOG)
            return [types.TextContent(type="text", text="restocked")]
        raise ValueError(f"Unknown tool: {tool}")

    @server.list_prompts()
    async def list_prompts() -> list[types.Prompt]:
        return [types.Prompt(name="refund_reply", arguments=[types.PromptArgument(name="customer", required=True)])]

    @server.get_prompt()
    async def get_prompt(prompt: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        if prompt != "refund_reply":
            raise ValueError(f"Unknown prompt: {prompt}")
        text = f"Dear {(arguments or {}).get('customer')}, your refund is on its way."
        return types.GetPromptResult(
            messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))]
        )

    @server.list_resources()
    async def list_resources() -> list[types.Resource]:
        return [types.Resource(uri=CATALOG, name="catalog")]  # type: ignore[arg-type]

    @server.read_resource()
    async def read_resource(uri: Any) -> str:
        if str(uri) != CATALOG:
            from mcp.shared.exceptions import McpError

            raise McpError(types.ErrorData(code=-32002, message="Resource not found"))
        return "KG-1031 garden hose"

    @server.subscribe_resource()
    async def subscribe(uri: Any) -> None:
        subscribers.append(request_ctx.get().session)

    @server.unsubscribe_resource()
    async def unsubscribe(uri: Any) -> None:
        session = request_ctx.get().session
        if session in subscribers:
            subscribers.remove(session)

    return server


async def _sample(session: Any) -> str:
    reply = await session.create_message(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text="Draft an apology"))],
        max_tokens=50,
    )
    return reply.content.text


# -- FastMCP 1 (mcp.server.fastmcp) ---------------------------------------------------------------


def fastmcp1_shop(name: str = "shop", version: str = "1.0.0") -> Any:
    import warnings

    with warnings.catch_warnings():  # pydantic-settings on 1.24: IncompleteFieldDefinitionWarning at import
        warnings.simplefilter("ignore")
        from mcp.server.fastmcp import Context, FastMCP
        from mcp.server.fastmcp.exceptions import ToolError

    mcp = FastMCP(name)
    mcp._mcp_server.version = version  # FastMCP 1 takes no version; its lowlevel server does
    return _fastmcp_shop(mcp, Context, ToolError)


# -- FastMCP 3 (fastmcp 3.x) ---------------------------------------------------------------------


def fastmcp3_shop(name: str = "shop", version: str = "1.0.0") -> Any:
    from fastmcp import Context, FastMCP
    from fastmcp.exceptions import ToolError

    return _fastmcp_shop(FastMCP(name, version=version), Context, ToolError)


def _fastmcp_shop(mcp: Any, Context: Any, ToolError: Any) -> Any:
    """The shop's tools, prompt and resource on a FastMCP of either flavour: their decorators are the same."""
    from pydantic import BaseModel

    class Approval(BaseModel):
        approved: bool

    @mcp.tool()
    def get_order_status(order_id: str) -> str:
        """Look up one order's status."""
        if order_id not in ORDERS:
            raise ToolError(f"Unknown order {order_id}; call find_orders first.")
        return ORDERS[order_id]

    @mcp.tool()
    def quote_refund(order_id: str, amount_cents: int) -> str:
        """Quote a refund; crashes on a bug for negative amounts."""
        if amount_cents < 0:
            raise RuntimeError("refund ledger corrupted")
        return f"refund of {amount_cents} for {order_id}"

    @mcp.tool()
    async def slow_export(ctx: Context, rows: int = 5) -> str:
        for i in range(rows):
            await ctx.report_progress(i + 1, rows, f"exported {i + 1}/{rows}")
        return "done"

    @mcp.tool()
    async def wait_for_stock(sku: str) -> str:
        await anyio.sleep(60)
        return f"{sku} in stock"

    @mcp.tool()
    async def approve_refund(ctx: Context, order_id: str) -> str:
        answer = await ctx.elicit(f"Approve the refund for {order_id}?", Approval)
        return f"approved: {getattr(getattr(answer, 'data', None), 'approved', None)}"

    @mcp.tool()
    async def draft_apology(ctx: Context, order_id: str) -> str:
        return await _sample(ctx.session)

    @mcp.tool()
    async def restock(ctx: Context) -> str:
        await ctx.session.send_resource_updated(CATALOG)
        return "restocked"

    @mcp.prompt()
    def refund_reply(customer: str) -> str:
        return f"Dear {customer}, your refund is on its way."

    @mcp.resource(CATALOG)
    def catalog() -> str:
        return "KG-1031 garden hose"

    return mcp


# -- the apps ------------------------------------------------------------------------------------


def http_app(server: Any, transport: str = "http") -> tuple[Any, str]:
    """An ASGI app serving `server` over Streamable HTTP ("http") or SSE ("sse"), and its MCP path."""
    from mcp.server.lowlevel.server import Server

    if isinstance(server, Server):
        return _lowlevel_app(server, transport)
    if type(server).__module__.startswith("mcp.server.fastmcp"):
        return (server.streamable_http_app(), "/mcp") if transport == "http" else (server.sse_app(), "/sse")
    return server.http_app(transport=transport), "/mcp" if transport == "http" else "/sse"


def _lowlevel_app(server: Any, transport: str) -> tuple[Any, str]:
    """A lowlevel server mounted by hand, as its host would: the SDK's session manager or SSE transport."""
    from contextlib import asynccontextmanager

    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Mount, Route

    if transport == "http":
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        manager = StreamableHTTPSessionManager(app=server)

        @asynccontextmanager
        async def lifespan(app: Any) -> Any:
            async with manager.run():
                yield

        return Starlette(routes=[Mount("/mcp", app=manager.handle_request)], lifespan=lifespan), "/mcp/"
    from mcp.server.sse import SseServerTransport

    sse = SseServerTransport("/messages/")

    async def handle_sse(request: Any) -> Response:
        async with sse.connect_sse(request.scope, request.receive, request._send) as (read, write):
            await server.run(read, write, server.create_initialization_options())
        return Response()

    routes = [Route("/sse", endpoint=handle_sse, methods=["GET"]), Mount("/messages/", app=sse.handle_post_message)]
    return Starlette(routes=routes), "/sse"
