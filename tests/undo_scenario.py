"""Run one client's day against servers and apps, printing the SDK's own spans as JSON.

    python undo_scenario.py never     # mcpobs never instrumented
    python undo_scenario.py undone    # servers, clients and apps built while instrumented, then uninstrument()

The SDK's own spans go to the global tracer provider, set here; a fresh process each time,
so the two runs start alike. test_undo.py compares them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

sys.path.insert(0, str(Path(__file__).parent))

from fastmcp_shop import create_server as create_fastmcp
from shop import create_server
from transports import serve_http

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)


async def _approve(ctx: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"approved": True})


async def _roots(ctx: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///srv/shop")])


async def a_day(target: Any, mode: str) -> list[Any]:
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    got: list[Any] = []
    async with Client(target, mode=mode, elicitation_callback=_approve, list_roots_callback=_roots) as client:
        got.append([t.name for t in (await client.list_tools()).tools])
        for name, arguments in [
            ("get_order_status", {"order_id": "O-1873"}),
            ("get_order_status", {"order_id": "O-0"}),
            ("no_such_tool", {}),
            *(  # multi-round-trip (2026-07-28 only): the round codec at work
                [("approve_refund", {"order_id": "O-1873"}), ("confirm_cancel", {"order_id": "O-2001"})]
                if mode == "auto"
                else []
            ),
        ]:
            result = await client.call_tool(name, arguments)
            got.append([result.is_error, [c.model_dump(mode="json") for c in result.content]])
        got.append((await client.get_prompt("refund_reply", {"customer": "Ada"})).model_dump(mode="json"))
        got.append((await client.read_resource("shop://catalog")).model_dump(mode="json"))
        try:
            await client.read_resource("shop://nowhere")
        except MCPError as exc:
            got.append(exc.error.code)
    return got


async def a_day_over_http_with_fastmcp(url: str) -> list[Any]:
    import fastmcp

    async with fastmcp.Client(url) as client:
        result = await client.call_tool("get_order_status", {"order_id": "O-1873"})
        return [c.model_dump(mode="json") for c in result.content]


async def a_fastmcp_day(server: Any) -> list[Any]:
    """The same mistakes against a FastMCP server, with `fastmcp.Client` in memory."""
    import fastmcp

    got: list[Any] = [[type(m).__name__ for m in server._mcp_server.middleware]]  # the chain FastMCP built
    async with fastmcp.Client(server) as client:
        got.append(sorted(t.name for t in await client.list_tools()))
        for name, arguments in [
            ("get_order_status", {"order_id": "O-1873"}),
            ("get_order_status", {"order_id": "O-0"}),
            ("quote_refund", {"order_id": "O-1", "amount_cents": -1}),
            ("no_such_tool", {}),
            ("slow_export", {"rows": 2}),
        ]:
            try:
                result = await client.call_tool(name, arguments)
                got.append([c.model_dump(mode="json") for c in result.content])
            except Exception as exc:
                got.append([type(exc).__name__, str(exc)])
        got.append((await client.get_prompt("refund_reply", {"customer": "Ada"})).model_dump(mode="json"))
    return got


def leftovers(servers: list[Any], apps: list[Any]) -> list[str]:
    """Every mcpobs object still in a server's chain, codec or app, and every wrapper on an SDK function."""
    import wrapt

    found = []
    for server in servers:
        for middleware in server.middleware:
            if type(middleware).__module__.startswith("mcpobs"):
                found.append(f"middleware {type(middleware).__name__}")
            codec = getattr(getattr(middleware, "_security", None), "codec", None)
            if codec is not None and type(codec).__module__.startswith("mcpobs"):
                found.append(f"codec {type(codec).__name__}")
    for app in apps:
        for middleware in app.user_middleware:
            if middleware.cls.__module__.startswith("mcpobs"):
                found.append(f"asgi {middleware.cls.__name__}{' (serving)' if app.middleware_stack else ''}")
    for name, module in list(sys.modules.items()):
        if not (name == "mcp" or name.startswith(("mcp.", "mcp_types", "fastmcp"))):
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, wrapt.FunctionWrapper):
                found.append(f"wrapper {name}.{attr}")
            elif isinstance(value, type) and value.__module__ == name:
                for method, inner in vars(value).items():
                    if isinstance(inner, wrapt.FunctionWrapper):
                        found.append(f"wrapper {name}.{attr}.{method}")
    return found


_RANDOM = {"mcp.session.id"}
"""Attributes FastMCP's own spans fill with a new random value each time."""


def span_set() -> list[list[Any]]:
    spans = [
        [
            s.name,
            s.kind.name,
            sorted(
                (k, "<random>" if k in _RANDOM else v if isinstance(v, str | int | float | bool) else list(v))
                for k, v in s.attributes.items()
            ),
        ]
        for s in exporter.get_finished_spans()
    ]
    return sorted(spans, key=json.dumps)


async def main(mode: str) -> None:
    import mcpobs
    from mcpobs.testing import CapturedTelemetry

    captured = CapturedTelemetry()
    if mode == "undone":
        mcpobs.instrument(tracer_provider=captured.tracer_provider, meter_provider=captured.meter_provider)
    built_before = create_server("before")  # built while instrumented, never served before the undo
    app_before = built_before.streamable_http_app()
    fast_before = create_fastmcp("fast-before")
    fast_app_before = fast_before.http_app()
    serving = create_server("serving")  # already serving when uninstrument() runs
    serving_app = serving.streamable_http_app()
    with serve_http(serving_app) as serving_url:
        await a_day(serving_url + "/mcp", "auto")
        wrapped_while_instrumented = len([x for x in leftovers([], []) if x.startswith("wrapper")])
        if mode == "undone":
            mcpobs.uninstrument()
        exporter.clear()
        captured.exporter.clear()
        results = []
        for transport in ("auto", "legacy"):
            results.append(await a_day(built_before, transport))
        with serve_http(app_before) as url:
            results.append(await a_day(url + "/mcp", "auto"))
            results.append(await a_day(url + "/mcp", "legacy"))
        results.append(await a_day(serving_url + "/mcp", "auto"))
        async with httpx2.AsyncClient() as http:  # refused by the transport: a bad protocol version
            refused = await http.post(
                serving_url + "/mcp",
                headers={
                    "mcp-protocol-version": "1999-01-01",
                    "content-type": "application/json",
                    "accept": "application/json, text/event-stream",
                },
                content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
            )
            results.append(refused.status_code)
        after = create_server("after")
        results.append(await a_day(after, "auto"))
        results.append(await a_fastmcp_day(fast_before))
        with serve_http(fast_app_before) as url:
            results.append(await a_day_over_http_with_fastmcp(url + "/mcp"))
        fast_after = create_fastmcp("fast-after")
        results.append(await a_fastmcp_day(fast_after))
        found = leftovers(
            [built_before, serving, after, fast_before._mcp_server, fast_after._mcp_server],
            [app_before, serving_app, fast_app_before],
        )
    print(
        json.dumps(
            {
                "spans": span_set(),
                "results": results,
                "leftovers": found,
                "wrapped_while_instrumented": wrapped_while_instrumented,
                "mcpobs_spans_after_undo": len(captured.spans()),
            }
        )
    )


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
