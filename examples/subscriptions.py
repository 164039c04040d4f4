"""Subscriptions through a bus of your own, wrapped in `mcpobs.ObservedSubscriptionBus`.

A server hands change events (a resource updated, the tool list changed) to its listen
streams through a `SubscriptionBus`. To share events between replicas you write your own
bus over Redis, NATS, a database...; here, `QueueBus` stands in for one: events go through
a queue and a separate task hands them to the listeners, like messages arriving from a
broker. Wrapped in `ObservedSubscriptionBus`:

- each publish is a PRODUCER span ``publish resource_updated`` inside the tool call;
- each event written to a stream is a CONSUMER span ``deliver resource_updated`` under the
  stream's long-lived ``subscriptions/listen`` span, *linked* to the publish that caused it.

The one thing your bus does for the link: carry `ObservedSubscriptionBus.inject()` with the
event and deliver inside `ObservedSubscriptionBus.extract(...)`. Run it::

    python examples/subscriptions.py
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import anyio
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.subscriptions import ServerEvent
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.trace import SpanKind

import mcpobs
from mcpobs import ObservedSubscriptionBus


class QueueBus:
    """A `SubscriptionBus`: publish enqueues, a pump task fans out to local listeners."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple[ServerEvent, dict[str, str]]] = asyncio.Queue()
        self.listeners: dict[object, Callable[[ServerEvent], None]] = {}
        self.pump: asyncio.Task[None] | None = None

    async def publish(self, event: ServerEvent) -> None:
        self._start()
        await self.queue.put((event, ObservedSubscriptionBus.inject()))  # the publish span's context

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        self._start()
        token = object()
        self.listeners[token] = listener
        return lambda: self.listeners.pop(token, None)

    def _start(self) -> None:
        if self.pump is None:
            self.pump = asyncio.get_running_loop().create_task(self._deliver_forever())

    async def _deliver_forever(self) -> None:
        while True:
            event, carrier = await self.queue.get()
            with ObservedSubscriptionBus.extract(carrier):  # deliveries link to that publish
                for listener in list(self.listeners.values()):
                    listener(event)


def create_server(bus: ObservedSubscriptionBus) -> MCPServer:
    server = MCPServer("shop", subscriptions=bus)

    @server.tool()
    async def restock(ctx: Context, sku: str) -> str:
        """Add stock; listeners of the SKU's stock resource hear about it."""
        await ctx.notify_resource_updated(f"shop://stock/{sku}")
        return f"{sku} restocked"

    return server


class PrintSpans(SpanProcessor):
    """Print each server-side span as it ends, with its parent and links by kind and name."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}

    def on_start(self, span: Span, parent_context: object = None) -> None:
        self.names[span.context.span_id] = f"{span.kind.name} {span.name}"

    def on_end(self, span: ReadableSpan) -> None:
        if span.kind is SpanKind.CLIENT:
            return  # the client's side of each call, left out to keep the output short
        parent = self.names.get(span.parent.span_id, "?") if span.parent else None
        links = [self.names.get(link.context.span_id, "?") for link in span.links]
        line = f"span {span.kind.name:<8} {span.name}"
        line += f"  (child of {parent})" if parent else ""
        line += f"  (linked to {', '.join(links)})" if links else ""
        print(line)


async def main() -> None:
    provider = TracerProvider()
    provider.add_span_processor(PrintSpans())
    mcpobs.instrument(tracer_provider=provider)

    server = create_server(ObservedSubscriptionBus(QueueBus()))
    async with Client(server) as client, client.listen(resource_subscriptions=["shop://stock/KG-2040"]) as stream:
        await client.call_tool("restock", {"sku": "KG-2040"})
        async for event in stream:
            print(f"client heard: {event}")
            break


if __name__ == "__main__":
    anyio.run(main)
