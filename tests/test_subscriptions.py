"""Subscription streams: a publish span and a delivery span per event, the open-stream gauge."""

from __future__ import annotations

import time
from contextlib import ExitStack

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.subscriptions import InMemorySubscriptionBus, ToolsListChanged
from opentelemetry.trace import SpanKind, StatusCode
from shop import create_server
from transports import serve_http

import mcpobs
from mcpobs import ObservedSubscriptionBus
from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

LISTEN = "subscriptions/listen"


def restocking(server: MCPServer) -> MCPServer:
    @server.tool()
    async def restock(ctx: Context) -> str:
        """Adds stock: the catalog resource and the tool list change."""
        await ctx.notify_tools_changed()
        await ctx.notify_resource_updated("shop://catalog")
        return "restocked"

    return server


async def eventually(check, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        await anyio.sleep(0.02)
    return True


def open_streams(telemetry) -> float:
    return telemetry.total(S.SUBSCRIPTION_STREAMS.name)


async def listen_and_restock(telemetry, server: MCPServer, transport: str) -> list:
    events = []
    with ExitStack() as stack:
        target = (
            stack.enter_context(serve_http(server.streamable_http_app())) + "/mcp" if transport == "http" else server
        )
        async with Client(target) as client:
            async with client.listen(tools_list_changed=True, resource_subscriptions=["shop://catalog"]) as sub:
                assert open_streams(telemetry) == 1  # someone is listening
                await client.call_tool("restock", {})
                async for event in sub:
                    events.append(event)
                    if len(events) == 2:
                        break
            assert await eventually(lambda: telemetry.spans_named(LISTEN))
    return events


@pytest.mark.parametrize("transport", ["auto", "http"])
async def test_each_event_is_a_publish_span_and_a_delivery_span_under_the_listen_span(mcpobs_telemetry, transport):
    events = await listen_and_restock(mcpobs_telemetry, restocking(create_server()), transport)
    assert [type(e).__name__ for e in events] == ["ToolsListChanged", "ResourceUpdated"]
    (listen,) = [s for s in mcpobs_telemetry.spans_named(LISTEN) if s.kind is SpanKind.SERVER]
    subscription_id = listen.attributes[S.JSONRPC_REQUEST_ID]

    publish_tools = mcpobs_telemetry.span("publish tools_list_changed")
    publish_resource = mcpobs_telemetry.span("publish resource_updated")
    deliver_tools = mcpobs_telemetry.span("deliver tools_list_changed")
    deliver_resource = mcpobs_telemetry.span("deliver resource_updated")
    assert publish_tools.kind is SpanKind.PRODUCER and deliver_tools.kind is SpanKind.CONSUMER
    # published inside the tool call that caused it
    (restock,) = [s for s in mcpobs_telemetry.spans_named("tools/call restock") if s.kind is SpanKind.SERVER]
    assert publish_tools.parent.span_id == restock.context.span_id
    assert publish_resource.attributes[S.MCP_RESOURCE_URI] == "shop://catalog"
    assert "shop://catalog" not in publish_resource.name
    for deliver, publish, kind in (
        (deliver_tools, publish_tools, "tools_list_changed"),
        (deliver_resource, publish_resource, "resource_updated"),
    ):
        assert deliver.parent.span_id == listen.context.span_id
        assert deliver.attributes[S.SUBSCRIPTION_ID] == subscription_id
        assert deliver.attributes[S.SUBSCRIPTION_EVENT] == kind
        assert [link.context.span_id for link in deliver.links] == [publish.context.span_id]
    assert deliver_resource.attributes[S.MCP_RESOURCE_URI] == "shop://catalog"
    # the acknowledgement is not an event
    assert len([s for s in mcpobs_telemetry.spans() if s.name.startswith("deliver ")]) == 2

    for direction in ("published", "delivered"):
        labels = {S.SUBSCRIPTION_DIRECTION: direction}
        assert mcpobs_telemetry.total(S.SUBSCRIPTION_EVENTS.name, labels) == 2
    # long-lived by design: never a latency sample, whatever its outcome; the gauge returns to zero
    assert mcpobs_telemetry.total(S.SERVER_OPERATION_DURATION.name, {S.MCP_METHOD_NAME: LISTEN}) == 0
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, {S.MCP_METHOD_NAME: LISTEN}) == 1
    assert await eventually(lambda: open_streams(mcpobs_telemetry) == 0)
    assert listen.status.status_code is StatusCode.UNSET


async def test_an_event_the_stream_did_not_ask_for_is_published_not_delivered(mcpobs_telemetry):
    server = restocking(create_server())
    async with Client(server) as client, client.listen(resource_subscriptions=["shop://catalog"]) as sub:
        await client.call_tool("restock", {})
        event = await anext(aiter(sub))
    assert event.uri == "shop://catalog"
    mcpobs_telemetry.span("publish tools_list_changed")
    assert mcpobs_telemetry.spans_named("deliver tools_list_changed") == []
    deliver = mcpobs_telemetry.span("deliver resource_updated")
    assert deliver.links[0].context.span_id == mcpobs_telemetry.span("publish resource_updated").context.span_id


async def test_two_streams_each_get_their_own_delivery(mcpobs_telemetry):
    server = restocking(create_server())
    async with (
        Client(server) as first,
        Client(server) as second,
        first.listen(tools_list_changed=True) as a,
        second.listen(tools_list_changed=True) as b,
    ):
        assert open_streams(mcpobs_telemetry) == 2
        await first.call_tool("restock", {})
        await anext(aiter(a))
        await anext(aiter(b))
    assert await eventually(lambda: open_streams(mcpobs_telemetry) == 0)
    deliveries = mcpobs_telemetry.spans_named("deliver tools_list_changed")
    assert len(deliveries) == 2
    assert len({d.attributes[S.SUBSCRIPTION_ID] for d in deliveries}) == 2
    publish = mcpobs_telemetry.span("publish tools_list_changed")
    assert all(d.links[0].context.span_id == publish.context.span_id for d in deliveries)


async def test_a_bus_wrapped_explicitly_and_seen_by_instrument_is_recorded_once(mcpobs_telemetry):
    bus = ObservedSubscriptionBus(ObservedSubscriptionBus(InMemorySubscriptionBus()))
    server = MCPServer("shop", subscriptions=bus)
    assert server._subscriptions is bus  # instrument() left it as it was
    async with Client(server) as client, client.listen(tools_list_changed=True) as sub:
        await bus.publish(ToolsListChanged())  # published by the application, outside any request
        await anext(aiter(sub))
    publish = mcpobs_telemetry.span("publish tools_list_changed")
    assert publish.parent is None
    deliver = mcpobs_telemetry.span("deliver tools_list_changed")
    assert deliver.links[0].context.span_id == publish.context.span_id
    assert mcpobs_telemetry.total(S.SUBSCRIPTION_EVENTS.name, {S.SUBSCRIPTION_DIRECTION: "published"}) == 1


async def test_instrument_observes_a_custom_bus_given_to_the_server(mcpobs_telemetry):
    class CountingBus(InMemorySubscriptionBus):
        published = 0

        async def publish(self, event) -> None:
            CountingBus.published += 1
            await super().publish(event)

    server = restocking(MCPServer("shop", subscriptions=CountingBus()))
    assert isinstance(server._subscriptions, ObservedSubscriptionBus)
    async with Client(server) as client:
        await client.call_tool("restock", {})
    assert CountingBus.published == 2
    assert len(mcpobs_telemetry.spans_named("publish tools_list_changed")) == 1


async def test_after_uninstrument_the_servers_bus_records_nothing(mcpobs_telemetry):
    server = restocking(create_server())
    mcpobs.uninstrument()
    async with Client(server) as client:
        assert (await client.call_tool("restock", {})).content[0].text == "restocked"
    assert mcpobs_telemetry.spans_named("publish tools_list_changed") == []


async def test_a_broken_telemetry_pipeline_never_stops_an_event(mcpobs_telemetry):
    from test_progress import RaisingOn

    for name in ("publish tools_list_changed", "deliver tools_list_changed"):
        mcpobs_telemetry.tracer_provider.add_span_processor(RaisingOn(name))
    server = restocking(create_server())
    async with Client(server) as client, client.listen(tools_list_changed=True) as sub:
        assert (await client.call_tool("restock", {})).content[0].text == "restocked"
        with anyio.fail_after(5):
            event = await anext(aiter(sub))
    assert isinstance(event, ToolsListChanged)
