"""Many clients at once over Streamable HTTP: every span ends once, parentage holds, counts match."""

from __future__ import annotations

from collections import Counter

import anyio
import pytest
from mcp import Client
from opentelemetry.trace import SpanKind
from shop import create_server
from transports import serve_http

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

CLIENTS, CALLS_EACH = 50, 40


async def test_fifty_clients_two_thousand_calls(mcpobs_telemetry):
    server = create_server()
    results: Counter[str] = Counter()
    with serve_http(server.streamable_http_app()) as base_url:

        async def one_client(n: int) -> None:
            async with Client(base_url + "/mcp") as client:
                await client.list_tools()  # a client names the tools it listed
                for i in range(CALLS_EACH):
                    order = "O-1873" if (n + i) % 4 else "O-404"
                    result = await client.call_tool("get_order_status", {"order_id": order})
                    results["error" if result.is_error else "ok"] += 1

        async with anyio.create_task_group() as tg:
            for n in range(CLIENTS):
                tg.start_soon(one_client, n)

    assert sum(results.values()) == CLIENTS * CALLS_EACH
    spans = mcpobs_telemetry.spans()
    ids = Counter((s.context.trace_id, s.context.span_id) for s in spans)
    assert max(ids.values()) == 1  # every span ended exactly once
    server_calls = [s for s in spans if s.kind is SpanKind.SERVER and s.name == "tools/call get_order_status"]
    assert len(server_calls) == CLIENTS * CALLS_EACH
    outcomes = Counter(s.attributes[S.OUTCOME] for s in server_calls)
    assert outcomes == {"ok": results["ok"], "tool_error": results["error"]}
    by_id = {s.context.span_id: s for s in spans}
    for s in server_calls:
        parent = by_id.get(s.parent.span_id) if s.parent else None
        assert parent is not None and parent.kind is SpanKind.CLIENT and parent.name == s.name
        assert parent.context.trace_id == s.context.trace_id
        assert parent.attributes[S.JSONRPC_REQUEST_ID] == s.attributes[S.JSONRPC_REQUEST_ID]
    assert (
        mcpobs_telemetry.total(S.SERVER_REQUESTS.name, {S.GEN_AI_TOOL_NAME: "get_order_status"}) == CLIENTS * CALLS_EACH
    )
    assert (
        mcpobs_telemetry.total(S.SERVER_OPERATION_DURATION.name, {S.GEN_AI_TOOL_NAME: "get_order_status"})
        == CLIENTS * CALLS_EACH
    )
