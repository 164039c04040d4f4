"""A shop whose every path carries a secret: for the privacy tests (`test_privacy_everywhere.py`).

Each path's text holds two distinct strings: `VISIBLE-<path>`, what an opt-in may show, and
`MASKED-<path>`, what the tests' `redact` masks. With default settings neither may reach any
exported byte; with the opt-ins the VISIBLE part shows and no MASKED part does.
Served as an `MCPServer` (`create_server`) and as a FastMCP 4 server (`create_fastmcp`).
"""

import re
from typing import Annotated, Any

import mcp_types as types
from pydantic import BaseModel

PATHS = (
    "tool_exception",
    "tool_error",
    "mcp_error",
    "resource_exception",
    "prompt_exception",
    "uri_userinfo",
    "uri_token",
    "uri_signature",
    "uri_fragment",
    "progress",
    "elicitation",
    "sampling",
    "sampling_reply",
    "elicitation_answer",
    "baggage",
    "client_url_userinfo",
    "client_url_query",
    "client_header",
    "arguments",
)


def secret(path: str) -> str:
    """The text of one path: its visible word and its masked one."""
    return f"VISIBLE-{path} MASKED-{path}"


def visible(path: str) -> str:
    return f"VISIBLE-{path}"


def masked(path: str) -> str:
    return f"MASKED-{path}"


def token(path: str) -> str:
    """One word (no space) for a place that takes no spaces: a URI part, a header, baggage."""
    return f"VISIBLE-{path}.MASKED-{path}"


_MASKED = re.compile(r"MASKED-[a-z_]+")


def redact(value: Any) -> Any:
    """The tests' `redact`: every MASKED word becomes `***`, in strings and in captured JSON alike."""
    if isinstance(value, str):
        return _MASKED.sub("***", value)
    if isinstance(value, dict):
        return {k: redact(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [redact(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


OPT_INS: dict[str, Any] = {
    "record_error_messages": True,
    "raw_resource_uris": True,
    "record_progress_messages": True,
    "capture_content": True,
    "redact": redact,
}
"""Every opt-in that records text from outside, with the tests' `redact`."""


SECRET_URI = (
    f"vault://alice:{token('uri_userinfo')}@vault.example/doc"
    f"?token={token('uri_token')}&X-Goog-Signature={token('uri_signature')}#{token('uri_fragment')}"
)
"""A resource URI with userinfo, a token, a signature and a fragment; the server does not serve it."""


class Approval(BaseModel):
    approved: bool


async def _ask() -> Any:
    from mcp.server.mcpserver.resolve import Elicit

    return Elicit(f"Approve {secret('elicitation')}?", Approval)


async def _sample() -> Any:
    from mcp.server.mcpserver.resolve import Sample

    text = types.TextContent(type="text", text=secret("sampling"))
    return Sample([types.SamplingMessage(role="user", content=text)], max_tokens=16)


def create_server() -> Any:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.resolve import Resolve
    from mcp.shared.exceptions import MCPError

    mcp = MCPServer("secret-shop", version="1.0.0")

    @mcp.tool()
    def charge(card_number: str) -> str:
        """Raises with the caller's text: a bug's message."""
        raise ValueError(f"card {card_number} declined: {secret('tool_exception')}")

    @mcp.tool()
    def refuse(reason: str) -> str:
        """A deliberate tool error: its text is the result's content."""
        raise ToolError(f"refused {reason}: {secret('tool_error')}")

    @mcp.tool()
    def upstream(reason: str) -> str:
        """A JSON-RPC error raised by the tool: its message reaches the client."""
        raise MCPError(-32000, f"upstream {reason}: {secret('mcp_error')}")

    @mcp.tool()
    async def report(ctx: Context) -> str:
        """A progress message is content."""
        await ctx.report_progress(1, 2, secret("progress"))
        return "done"

    @mcp.tool()
    async def approve(
        approval: Annotated[Approval, Resolve(_ask)],
        sampled: Annotated[types.CreateMessageResult, Resolve(_sample)],
    ) -> str:
        """Elicitation and sampling, each with a secret in its question."""
        return "approved" if approval.approved else "refused"

    @mcp.tool()
    async def echo_meta(ctx: Context) -> str:
        """What the request's `_meta` carried, as the server received it."""
        return repr(ctx.request_context.meta)

    @mcp.resource("vault://{name}")
    def vault(name: str) -> str:
        raise ValueError(f"vault {name} sealed: {secret('resource_exception')}")

    @mcp.prompt()
    def greet(name: str) -> str:
        raise ValueError(f"no greeting for {name}: {secret('prompt_exception')}")

    return mcp


def create_fastmcp() -> Any:
    from fastmcp import Context, FastMCP
    from fastmcp.exceptions import ToolError
    from mcp.shared.exceptions import MCPError

    mcp: FastMCP = FastMCP("secret-fastshop", version="1.0.0")

    @mcp.tool
    def charge(card_number: str) -> str:
        """Raises with the caller's text: a bug's message."""
        raise ValueError(f"card {card_number} declined: {secret('tool_exception')}")

    @mcp.tool
    def refuse(reason: str) -> str:
        """A deliberate tool error."""
        raise ToolError(f"refused {reason}: {secret('tool_error')}")

    @mcp.tool
    def upstream(reason: str) -> str:
        """A JSON-RPC error raised by the tool."""
        raise MCPError(-32000, f"upstream {reason}: {secret('mcp_error')}")

    @mcp.tool
    async def report(ctx: Context) -> str:
        """A progress message is content."""
        await ctx.report_progress(1, 2, secret("progress"))
        return "done"

    @mcp.resource("vault://{name}")
    def vault(name: str) -> str:
        raise ValueError(f"vault {name} sealed: {secret('resource_exception')}")

    @mcp.prompt
    def greet(name: str) -> str:
        """A prompt that fails."""
        raise ValueError(f"no greeting for {name}: {secret('prompt_exception')}")

    return mcp


async def elicitation_callback(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"approved": True})


async def sampling_callback(context: Any, params: Any) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=secret("sampling_reply")), model="m"
    )


async def drive(client: Any, fastmcp: bool) -> None:
    """Every path, once; each call may fail (most do, on purpose), none may stop the rest."""
    from contextlib import suppress

    calls: list[Any] = [
        lambda: client.call_tool("charge", {"card_number": secret("arguments")}),
        lambda: client.call_tool("refuse", {"reason": "r"}),
        lambda: client.call_tool("upstream", {"reason": "r"}),
        lambda: client.call_tool("report", {}),
        lambda: client.read_resource("vault://v1"),
        lambda: client.read_resource(SECRET_URI),
        lambda: client.subscribe_resource(SECRET_URI),
        lambda: client.get_prompt("greet", {"name": "n"}),
    ]
    if not fastmcp:
        calls.append(lambda: client.call_tool("approve", {}))
    for call in calls:
        with suppress(Exception):
            await call()
