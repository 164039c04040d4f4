"""What a host gets from a tool call is the same, byte for byte, with or without mcpobs on either side.

A server running mcpobs classifies each failed tool call and can tell an instrumented client
(the verdict, `_core/verdict.py`); before, it wrote the verdict into every failed result's
`_meta`, so every host, framework and model calling it saw one more key, mcpobs on their side
or not. Now the client asks, the server answers only then, and the client takes the verdict
out before its host sees the result. Each test calls the shop's tools (ok, a `ToolError`, a
crash, an unknown tool, bad arguments) through the SDK's plain `Client` and compares the raw
results (`model_dump`, all fields and the fields set) with a run where neither side has
mcpobs: in memory (both modes), over Streamable HTTP on loopback, and over stdio with the
server in a process of its own, with and without mcpobs. The tools/call request's marker is
removed before the server's code sees it (`ctx.request_context.meta` and the params' `_meta`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Context as FastMCPContext
from mcp import Client
from mcp.server.mcpserver import Context
from opentelemetry.trace import SpanKind
from shop import create_server
from transports import connected, serve_http, stdio_params

import mcpobs
from mcpobs import semconv as S
from mcpobs.testing import CapturedTelemetry, capture

pytestmark = pytest.mark.anyio

CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("ok", "get_order_status", {"order_id": "O-1873"}),
    ("tool error", "get_order_status", {"order_id": "O-7144"}),
    ("crash", "quote_refund", {"order_id": "O-1873", "amount_cents": -5}),
    ("unknown tool", "shop__get_order_status", {"order_id": "O-1873"}),
    ("bad arguments", "quote_refund", {"order_id": "O-1873", "amount_cents": "many"}),
]
SERVER_SAYS = [
    ("ok", None),
    ("tool_error", "handler"),
    ("server_error", "handler"),
    ("client_error", "discovery"),
    ("client_error", "arguments"),
]


def serialized(result: Any) -> str:
    """What a host could see of a result: every field, and which fields were set."""
    return json.dumps(
        {
            "all": result.model_dump(mode="json", by_alias=True),
            "set": result.model_dump(mode="json", by_alias=True, exclude_unset=True),
        }
    )


@contextmanager
def mcpobs_on(options: dict[str, Any] | None) -> Iterator[CapturedTelemetry | None]:
    """`None`: no mcpobs at all; else `instrument(**options)` into in-memory exporters."""
    mcpobs.uninstrument()
    if options is None:
        yield None
        return
    telemetry = capture(**options)
    try:
        yield telemetry
    finally:
        mcpobs.uninstrument()


async def _results(client: Any) -> list[str]:
    return [serialized(await client.call_tool(name, arguments)) for _, name, arguments in CALLS]


def _client_verdicts(telemetry: CapturedTelemetry) -> list[tuple[Any, Any]]:
    spans = sorted(
        (
            s
            for s in telemetry.spans()
            if s.kind is SpanKind.CLIENT and s.attributes.get(S.MCP_METHOD_NAME) == "tools/call"
        ),
        key=lambda s: s.start_time,
    )
    return [(s.attributes[S.OUTCOME], s.attributes.get(S.FAILURE_BOUNDARY)) for s in spans]


SIDES = {"neither": None, "server only": {"clients": False}, "both": {}}
"""In one process: mcpobs on neither side, on the server only (`clients=False`), on both."""


@pytest.mark.parametrize("transport", ["auto", "legacy", "http"])
async def test_a_plain_client_and_an_instrumented_one_get_what_a_server_without_mcpobs_sends(transport):
    seen: dict[str, list[str]] = {}
    for side, options in SIDES.items():
        with mcpobs_on(options) as telemetry:
            async with connected(transport, create_server()) as client:
                seen[side] = await _results(client)
            if side == "both":
                assert telemetry is not None
                assert _client_verdicts(telemetry) == SERVER_SAYS  # the verdict was still taken
    for side in ("server only", "both"):
        for (label, _, _), got, want in zip(CALLS, seen[side], seen["neither"], strict=True):
            assert got == want, f"{side}, {label}: the host saw {got}, without mcpobs {want}"


async def test_over_stdio_either_side_with_or_without_mcpobs_sees_the_same(tmp_path: Path):
    """The server in a process of its own, with mcpobs or without (MCPOBS_TEST_PLAIN)."""
    seen: dict[tuple[bool, bool], list[str]] = {}
    for server_has in (False, True):
        for client_has in (False, True):
            spans = tmp_path / f"spans-{server_has}-{client_has}.jsonl"
            env = None if server_has else {"MCPOBS_TEST_PLAIN": "1"}
            with mcpobs_on({} if client_has else None) as telemetry:
                async with Client(stdio_params(spans, env=env)) as client:
                    seen[(server_has, client_has)] = await _results(client)
                if client_has and server_has:
                    assert telemetry is not None
                    assert _client_verdicts(telemetry) == SERVER_SAYS
    want = seen[(False, False)]
    assert all(json.loads(r)["set"].get("isError") for r in want[1:])  # the failures did fail
    for sides, got in seen.items():
        assert got == want, f"server with mcpobs: {sides[0]}, client with mcpobs: {sides[1]}"


def _meta_seeing_server() -> Any:
    """A shop whose tool says which `_meta` keys its own code can read."""
    server = create_server()

    @server.tool()
    def meta_keys(ctx: Context) -> str:
        context = ctx.request_context
        meta = context.meta or {}
        raw = (context.params or {}).get("_meta") or {}
        return json.dumps({"meta": sorted(meta), "params": sorted(raw)})

    return server


def _fastmcp_meta_seeing_server() -> Any:
    from fastmcp_shop import create_server as create_fastmcp

    server = create_fastmcp()

    @server.tool
    def meta_keys(ctx: FastMCPContext) -> str:
        context = ctx.request_context
        meta = (context.meta if context is not None else None) or {}
        return json.dumps({"meta": sorted(meta), "params": sorted(meta)})

    return server


@pytest.mark.parametrize(
    ("host", "transport"), [("mcpserver", "auto"), ("mcpserver", "legacy"), ("mcpserver", "http"), ("fastmcp", "http")]
)
async def test_the_request_for_the_verdict_never_reaches_the_servers_code(host, transport):
    with mcpobs_on({}):
        if host == "fastmcp":
            with serve_http(_fastmcp_meta_seeing_server().http_app()) as base:
                async with Client(base + "/mcp") as client:
                    result = await client.call_tool("meta_keys", {})
        else:
            async with connected(transport, _meta_seeing_server()) as client:
                result = await client.call_tool("meta_keys", {})
    seen = json.loads(result.content[0].text)  # type: ignore[union-attr]
    assert "traceparent" in seen["params"] or transport == "auto"  # the tool does see the request's `_meta`
    assert S.META_VERDICT_WANTED not in seen["meta"] + seen["params"], seen


async def test_send_verdict_false_never_sends_one_even_when_asked():
    from mcp_types import CallToolResult

    with mcpobs_on({"send_verdict": False}):
        async with Client(create_server(), mode="legacy") as client:
            raw = await client.session.send_request(  # asks itself, and reads the raw result
                _request("get_order_status", {"order_id": "O-7144"}, {S.META_VERDICT_WANTED: S.VERDICT_VERSION}),
                CallToolResult,
            )
    assert raw.is_error and S.META_VERDICT not in (raw.meta or {})


async def test_a_verdict_asked_for_by_the_host_itself_is_the_hosts_to_read():
    """A host that names the key in its own `meta` asked for the verdict itself: it is left in the result."""
    with mcpobs_on({}):
        async with Client(create_server()) as client:
            result = await client.session.call_tool(
                "get_order_status", {"order_id": "O-7144"}, meta={S.META_VERDICT_WANTED: S.VERDICT_VERSION}
            )
    assert (result.meta or {}).get(S.META_VERDICT) == {
        "outcome": "tool_error",
        "boundary": "handler",
        "errorType": "tool_error",
    }


def _request(name: str, arguments: dict[str, Any], meta: dict[str, Any]) -> Any:
    from mcp_types import CallToolRequest, CallToolRequestParams

    return CallToolRequest(params=CallToolRequestParams(name=name, arguments=arguments, _meta=meta))


def test_the_plain_stdio_server_is_really_without_mcpobs(tmp_path: Path):
    """MCPOBS_TEST_PLAIN leaves the server uninstrumented: no span reaches its file."""
    import anyio

    spans = tmp_path / "spans.jsonl"

    async def main() -> None:
        async with Client(stdio_params(spans, env={"MCPOBS_TEST_PLAIN": "1"})) as client:
            await client.call_tool("get_order_status", {"order_id": "O-1873"})

    mcpobs.uninstrument()
    anyio.run(main)
    assert not spans.exists() or not spans.read_text().strip()
    assert os.environ.get("MCPOBS_TEST_PLAIN") is None  # the test's own process was never told
