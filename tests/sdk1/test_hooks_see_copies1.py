"""mcp 1.x: `redact` and the hooks are handed copies, so editing them changes nothing the call does.

As `tests/test_hooks_see_copies.py` on 2.x: an in-place `redact` with content capture on, and
hooks that rewrite the request and the result, on FastMCP 1 and FastMCP 3 in memory with mcpobs
on both sides: the tool still receives the card number, the caller's dict is untouched, and the
host's result is exactly as without mcpobs.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from servers1 import create
from transports1 import session_over

import mcpobs
from mcpobs import semconv as S
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio

CARD = "4111111111111111"


def in_place_redact(value: Any) -> Any:
    if isinstance(value, dict):
        for holder in (value, value.get("details"), value.get("structuredContent")):
            if isinstance(holder, dict) and "card" in holder:
                holder["card"] = "***"
        for part in value.get("content") or ():
            if isinstance(part, dict) and "text" in part:
                part["text"] = "***"
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


HOOKS = {
    "server_request_hook": rewrite_request,
    "server_response_hook": rewrite_result,
    "client_request_hook": rewrite_request,
    "client_response_hook": rewrite_result,
}


async def run(host: str) -> tuple[list[Any], dict[str, Any], str]:
    received: list[Any] = []
    server = create(host)

    def charge(card: str, details: dict[str, str]) -> dict[str, str]:
        received.append((card, dict(details)))
        return {"card": card, "note": "charged"}

    server.tool()(charge)
    arguments = {"card": CARD, "details": {"card": CARD}}
    async with session_over("memory", server) as session:
        result = await session.call_tool("charge", arguments)
    return received, arguments, json.dumps(result.model_dump(mode="json", by_alias=True), sort_keys=True)


@pytest.mark.parametrize("hooked", [False, True], ids=["redact", "redact and hooks"])
@pytest.mark.parametrize("host", ["fastmcp1", "fastmcp3"])
async def test_an_in_place_redact_and_hooks_leave_the_call_as_without_mcpobs(host, hooked):
    mcpobs.uninstrument()
    plain = await run(host)
    assert plain[0] == [(CARD, {"card": CARD})] and CARD in plain[2]
    telemetry = capture(capture_content=True, redact=in_place_redact, **(HOOKS if hooked else {}))
    try:
        observed = await run(host)
    finally:
        mcpobs.uninstrument()
    assert observed == plain
    recorded = [
        value
        for span in telemetry.spans()
        for key, value in (span.attributes or {}).items()
        if key in (S.GEN_AI_TOOL_CALL_ARGUMENTS, S.GEN_AI_TOOL_CALL_RESULT)
    ]
    assert recorded and not any(CARD in text for text in recorded)
