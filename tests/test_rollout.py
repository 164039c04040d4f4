"""Releases in metrics: which release served, which answered a client, which its catalog came from; the model.

A rolling deploy in process: replicas of two releases of one server, and hosts whose clients
share the SDK's response cache (a catalog listed from one replica serves the next), the way a
host or a gateway caches `tools/list` across connections.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

import pytest
from mcp import Client
from mcp.client.caching import CacheConfig, InMemoryResponseCacheStore
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import MCPServer
from mcp_types import Implementation
from opentelemetry.trace import SpanKind
from pydantic import BaseModel
from transports import connected

import mcpobs
from mcpobs import semconv as S
from mcpobs._core import labels as _labels

pytestmark = pytest.mark.anyio


class StockV1(BaseModel):
    sku: str
    on_hand: int


class StockV2(BaseModel):
    sku: str
    count: int  # release 2.0.0 renamed on_hand


def check_stock_v1(sku: str) -> StockV1:
    """Units on hand."""
    return StockV1(sku=sku, on_hand=3)


def check_stock_v2(sku: str) -> StockV2:
    """Units on hand."""
    return StockV2(sku=sku, count=3)


def replica(version: str) -> MCPServer:
    """One release of the stock server; its listings may be cached for ten minutes."""
    server = MCPServer("stock", version=version, cache_hints={"tools/list": CacheHint(ttl_ms=600_000)})
    server.add_tool(check_stock_v2 if version.startswith("2.") else check_stock_v1, name="check_stock")
    return server


def host(server: Any, store: InMemoryResponseCacheStore, version: str) -> Client:
    """A client of a host that caches listings across connections (the SDK's response cache, shared)."""
    cache = CacheConfig(store=store, partition="host", target_id="stock")
    return Client(server, cache=cache, client_info=Implementation(name="host", version=version))


async def call_through(client: Client) -> None:
    await client.list_tools()  # from the shared cache after the first connection
    with suppress(RuntimeError):  # output validation against the cached schema
        await client.call_tool("check_stock", {"sku": "KG-1"})


def counted(telemetry: Any, metric: S.MetricSpec) -> dict[tuple[Any, ...], float]:
    """(server release, client version, catalog release, error.type) -> count, for tools/call."""
    found: dict[tuple[Any, ...], float] = {}
    for point in telemetry.points(metric.name):
        a = point.attributes
        if a.get(S.MCP_METHOD_NAME) != "tools/call":
            continue
        key = (a.get(S.SERVER_VERSION), a.get(S.CLIENT_VERSION), a.get(S.CATALOG_RELEASE), a.get(S.ERROR_TYPE))
        found[key] = found.get(key, 0) + (getattr(point, "count", None) or point.value)
    return found


async def test_a_breaking_release_is_counted_against_it_on_the_client_with_the_catalog_it_broke(mcpobs_telemetry):
    old, new = replica("1.0.0"), replica("2.0.0")
    store = InMemoryResponseCacheStore()
    async with host(old, store, "4.2") as client:  # lists from 1.0.0: the cached catalog
        await call_through(client)
    async with host(new, store, "4.2") as client:  # the deploy: same cache, the new replica
        await call_through(client)

    calls = counted(mcpobs_telemetry, S.CLIENT_REQUESTS)
    assert calls == {
        ("1.0.0", "4.2", "1.0.0", None): 1,
        ("2.0.0", "4.2", "1.0.0", S.OUTPUT_VALIDATION): 1,
    }
    # the duration carries the releases, not the catalog (a counter-only label)
    durations = counted(mcpobs_telemetry, S.CLIENT_OPERATION_DURATION)
    assert durations == {("1.0.0", "4.2", None, None): 1, ("2.0.0", "4.2", None, S.OUTPUT_VALIDATION): 1}
    failed = [
        s
        for s in mcpobs_telemetry.spans_named("tools/call check_stock", SpanKind.CLIENT)
        if s.attributes.get(S.ERROR_TYPE) == S.OUTPUT_VALIDATION
    ]
    assert len(failed) == 1
    attrs = failed[0].attributes
    assert attrs[S.SERVER_VERSION] == "2.0.0" and attrs[S.CATALOG_RELEASE] == "1.0.0"
    assert len(attrs[S.TOOL_SCHEMA_FINGERPRINT]) == 16  # the schema the client held, now recorded


async def test_the_server_counts_by_its_release_and_its_stale_calls_by_release(mcpobs_telemetry):
    old, new = replica("1.0.0"), replica("2.0.0")
    store = InMemoryResponseCacheStore()
    async with host(old, store, "4.2") as client:
        await call_through(client)
    async with host(new, store, "4.2") as client:
        await call_through(client)

    served = counted(mcpobs_telemetry, S.SERVER_REQUESTS)
    assert {k[0] for k in served} == {"1.0.0", "2.0.0"}
    assert {k[0] for k in counted(mcpobs_telemetry, S.SERVER_OPERATION_DURATION)} == {"1.0.0", "2.0.0"}
    # a cache hit sends no tools/list, yet the fingerprint of the cached schema still rides along
    stale = {p.attributes[S.SERVER_VERSION]: p.value for p in mcpobs_telemetry.points(S.STALE_CALLS.name)}
    assert stale == {"2.0.0": 1}


async def test_a_compatible_release_is_neither_stale_nor_failing(mcpobs_telemetry):
    old, fixed = replica("1.0.0"), replica("1.0.1")
    store = InMemoryResponseCacheStore()
    async with host(old, store, "4.2") as client:
        await call_through(client)
    async with host(fixed, store, "4.2") as client:
        await call_through(client)
    assert counted(mcpobs_telemetry, S.CLIENT_REQUESTS) == {
        ("1.0.0", "4.2", "1.0.0", None): 1,
        ("1.0.1", "4.2", "1.0.0", None): 1,
    }
    assert mcpobs_telemetry.points(S.STALE_CALLS.name) == []


@pytest.mark.parametrize("transport", ["legacy", "http-legacy", "http"])
async def test_the_answering_release_is_known_on_every_transport(mcpobs_telemetry, transport):
    """2026-07-28 results carry the server's stamp; a legacy session says it once, at the handshake."""
    async with connected(transport, replica("2.0.0")) as client:
        await client.call_tool("check_stock", {"sku": "KG-1"})
    assert {k[0] for k in counted(mcpobs_telemetry, S.CLIENT_REQUESTS)} == {"2.0.0"}


async def test_a_server_without_a_version_adds_no_release_label(mcpobs_telemetry):
    server = MCPServer("stock")
    server.add_tool(check_stock_v1, name="check_stock")
    async with connected("auto", server) as client:
        await client.call_tool("check_stock", {"sku": "KG-1"})
    for point in mcpobs_telemetry.points(S.SERVER_REQUESTS.name):
        assert S.SERVER_VERSION not in point.attributes


def test_release_labels_are_bounded():
    releases = _labels._Releases()
    kept = [releases.bound(f"1.0.{n}") for n in range(S.MAX_RELEASES)]
    assert kept == [f"1.0.{n}" for n in range(S.MAX_RELEASES)]
    assert releases.bound("9.9.9") == S.OTHER  # one more distinct release: no new series
    assert releases.bound("1.0.3") == "1.0.3"  # one already seen stays itself
    assert releases.bound("x" * (S.MAX_RELEASE_LENGTH + 1)) == S.OTHER
    assert releases.bound("") is None and releases.bound(None) is None and releases.bound(3) is None


async def test_the_model_behind_a_client_is_on_its_spans_and_sent_only_when_asked(mcpobs_telemetry):
    server = replica("1.0.0")
    async with connected("auto", server) as client:
        with mcpobs.model("claude-sonnet-4-5", version="claude-sonnet-4-5-20250929", provider="anthropic"):
            await client.call_tool("check_stock", {"sku": "KG-1"})
        with mcpobs.model("gpt-5", send=True):
            await client.call_tool("check_stock", {"sku": "KG-2"})
        await client.call_tool("check_stock", {"sku": "KG-3"})
    client_side = mcpobs_telemetry.spans_named("tools/call check_stock", SpanKind.CLIENT)
    server_side = mcpobs_telemetry.spans_named("tools/call check_stock", SpanKind.SERVER)
    models = [s.attributes.get(S.GEN_AI_REQUEST_MODEL) for s in client_side]
    assert models == ["claude-sonnet-4-5", "gpt-5", None]
    first = client_side[0].attributes
    assert first[S.GEN_AI_RESPONSE_MODEL] == "claude-sonnet-4-5-20250929"
    assert first[S.GEN_AI_PROVIDER_NAME] == "anthropic"
    assert [s.attributes.get(S.GEN_AI_REQUEST_MODEL) for s in server_side] == [None, "gpt-5", None]
    for point in mcpobs_telemetry.points(S.CLIENT_REQUESTS.name):  # a free-form string: never a label
        assert S.GEN_AI_REQUEST_MODEL not in point.attributes


async def test_a_model_sent_by_a_peer_is_bounded_on_the_server(mcpobs_telemetry):
    server = replica("1.0.0")
    async with connected("auto", server) as client:
        meta = {S.META_MODEL: {"name": "m" * 10_000, "version": 7, "provider": None}}
        await client.session.call_tool("check_stock", {"sku": "KG-1"}, meta=meta)
    span = mcpobs_telemetry.span("tools/call check_stock", SpanKind.SERVER)
    assert span.attributes[S.GEN_AI_REQUEST_MODEL] == "m" * S.MAX_MODEL_LENGTH
    assert S.GEN_AI_RESPONSE_MODEL not in span.attributes and S.GEN_AI_PROVIDER_NAME not in span.attributes


def test_a_bad_model_says_how_to_fix_it():
    with (
        pytest.raises(mcpobs.ConfigurationError, match=r"model\(name=...\) must be a non-empty string"),
        mcpobs.model(""),
    ):
        pass
    with pytest.raises(mcpobs.ConfigurationError, match="version"), mcpobs.model("m", version=3):  # type: ignore[arg-type]
        pass


def test_the_autoconfigured_resource_takes_the_servers_release_unless_the_application_set_one():
    from test_autoconfig import CONSOLE, run_app

    run = run_app(CONSOLE)  # the shop states version 1.0.0
    span = run.server_span("tools/call audited_refund")
    assert span["resource"]["attributes"][S.SERVICE_VERSION] == "1.0.0"
    metrics = [rm["resource"]["attributes"] for e in run.exported for rm in e.get("resource_metrics", ())]
    assert metrics and all(m[S.SERVICE_VERSION] == "1.0.0" for m in metrics)

    stated = run_app({**CONSOLE, "OTEL_RESOURCE_ATTRIBUTES": f"{S.SERVICE_VERSION}=2026.12.1"})
    span = stated.server_span("tools/call audited_refund")
    assert span["resource"]["attributes"][S.SERVICE_VERSION] == "2026.12.1"  # the application's own wins


@pytest.mark.parametrize("transport", ["auto", "http-legacy"])
async def test_a_session_per_call_carries_the_catalog_another_session_listed(mcpobs_telemetry, transport):
    """A host that lists in one session and calls in the next (langchain-mcp-adapters' default opens a
    session per call): the call still carries the schema fingerprint and catalog release learned for
    that server, with no extra request on the wire (issue 52)."""
    from contextlib import ExitStack

    from transports import serve_http

    server = replica("1.4.0")
    with ExitStack() as stack:
        target: Any = server
        if transport == "http-legacy":
            target = stack.enter_context(serve_http(server.streamable_http_app())) + "/mcp"
        mode = "legacy" if transport == "http-legacy" else "auto"
        async with Client(target, mode=mode) as lister:
            await lister.list_tools()
        for _ in range(2):
            async with Client(target, mode=mode) as caller:
                await caller.call_tool("check_stock", {"sku": "KG-1"})
    (served, *_) = mcpobs_telemetry.spans_named("tools/call check_stock", SpanKind.SERVER)
    calls = mcpobs_telemetry.spans_named("tools/call check_stock", SpanKind.CLIENT)
    assert len(calls) == 2
    for call in calls:
        assert call.attributes[S.TOOL_SCHEMA_FINGERPRINT] == served.attributes[S.TOOL_SCHEMA_FINGERPRINT]
        assert call.attributes[S.CATALOG_RELEASE] == "1.4.0"
    # The fingerprint the callers held went to the server with the call: the server sees it is current.
    assert not any(
        s.attributes.get(S.TOOL_SCHEMA_STALE) for s in mcpobs_telemetry.spans_named("tools/call check_stock")
    )
