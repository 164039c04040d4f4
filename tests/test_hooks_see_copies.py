"""`redact` and the hooks are handed copies: editing what they get changes nothing the call does.

A natural in-place `redact` (`value["card"] = "***"`, `part["text"] = "***"`) with content
capture on, and hooks that try to rewrite the request and the result: the tool still receives
the card number, the caller's own argument dict is untouched, and the host receives the result
exactly as without mcpobs (in memory, both modes, mcpobs on both sides; `_core/copies.py`).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

import mcpobs
from mcpobs import semconv as S
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio

CARD = "4111111111111111"


def in_place_redact(value: Any) -> Any:
    """The careless redact: it edits what it is given."""
    if isinstance(value, dict):
        if "card" in value:
            value["card"] = "***"
        for part in value.get("content") or ():
            if isinstance(part, dict) and "text" in part:
                part["text"] = "***"
        structured = value.get("structuredContent")
        if isinstance(structured, dict):
            structured["card"] = "***"
        nested = value.get("details")
        if isinstance(nested, dict):
            nested["card"] = "***"
    return value


def rewrite_request(span: Any, request: Any) -> None:
    params = request.params
    arguments = params.get("arguments") if isinstance(params, dict) else getattr(params, "arguments", None)
    if isinstance(arguments, dict):
        arguments["card"] = "hook"
        arguments["details"]["card"] = "hook"


def rewrite_result(span: Any, result: Any) -> None:
    content = result.get("content") if isinstance(result, dict) else getattr(result, "content", None)
    for part in content or ():
        if isinstance(part, dict):
            part["text"] = "hook"
        else:
            part.text = "hook"


def create_server(received: list[Any]) -> MCPServer:
    mcp = MCPServer("charges")

    @mcp.tool()
    def charge(card: str, details: dict[str, str]) -> dict[str, str]:
        """Charge a card; says what it was given."""
        received.append((card, dict(details)))
        return {"card": card, "note": "charged"}

    return mcp


def shown(result: Any) -> str:
    return json.dumps(result.model_dump(mode="json", by_alias=True), sort_keys=True)


async def run(mode: str) -> tuple[list[Any], dict[str, Any], str]:
    received: list[Any] = []
    arguments = {"card": CARD, "details": {"card": CARD}}
    async with Client(create_server(received), mode=mode) as client:
        result = await client.call_tool("charge", arguments)
    return received, arguments, shown(result)


@pytest.mark.parametrize("hooked", [False, True], ids=["redact", "redact and hooks"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_in_place_redact_and_hooks_leave_the_call_as_without_mcpobs(mode, hooked):
    mcpobs.uninstrument()
    plain = await run(mode)
    assert plain[0] == [(CARD, {"card": CARD})] and CARD in plain[2]
    hooks = {
        f"{side}_{kind}_hook": hook
        for side in ("server", "client")
        for kind, hook in (("request", rewrite_request), ("response", rewrite_result))
    }
    telemetry = capture(capture_content=True, redact=in_place_redact, **(hooks if hooked else {}))
    try:
        observed = await run(mode)
    finally:
        mcpobs.uninstrument()
    assert observed == plain  # the tool's arguments, the caller's dict and the host's result
    recorded = [
        s.attributes.get(key)
        for s in telemetry.spans()
        for key in (S.GEN_AI_TOOL_CALL_ARGUMENTS, S.GEN_AI_TOOL_CALL_RESULT)
        if s.attributes and key in s.attributes
    ]
    assert len(recorded) == 4 and not any(CARD in text for text in recorded)  # redact still masks what is recorded


def test_a_hook_view_reads_as_the_value_and_refuses_writes():
    from mcp_types import CallToolResult, TextContent

    from mcpobs._core.copies import ReadOnly, for_hook

    result = CallToolResult(content=[TextContent(type="text", text="x")])
    view = ReadOnly(result)
    assert isinstance(view, CallToolResult) and view.content[0].text == "x"
    view.content[0].text = "changed"  # a copy: read once, kept for the hook
    assert view.content[0].text == "changed" and result.content[0].text == "x"
    with pytest.raises(AttributeError, match="read-only"):
        view.is_error = True
    given = for_hook(result)
    given.content[0].text = "changed"
    assert type(given) is CallToolResult and result.content[0].text == "x"
    original = {"a": [1, {"b": 2}]}
    given = for_hook(original)
    given["a"][1]["b"] = 3
    assert original == copy.deepcopy({"a": [1, {"b": 2}]})
