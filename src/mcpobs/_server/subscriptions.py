"""Subscription streams: a span per published event, a span per event delivered on a stream.

`ObservedSubscriptionBus` wraps any `SubscriptionBus` (the SDK's in-memory one, or a
Redis/NATS bus of your own). Each `publish` becomes a PRODUCER span. Each event written
to a `subscriptions/listen` stream becomes a CONSUMER span under that stream's long-lived
listen span, linked to the publish that caused it. `instrument()` wraps every
`MCPServer`'s bus the same way (once: a bus you wrapped yourself is left as it is).

Linking a delivery to its publish: the SDK's events are equal-valued values with no
identity, and they reach the stream through a buffer read by another task. So the
wrapped listener notes, per stream and in order, the publisher's span context when the
event is handed to the stream; the delivery takes the first noted entry for its event.

Across processes, a bus implementation carries the context itself:
`ObservedSubscriptionBus.inject()` on publish gives a small dict of strings to send with
the event; `with ObservedSubscriptionBus.extract(carrier):` around calling the local
listeners on arrival makes the delivery on replica B link to the publish on replica A.

A listen stream is long-lived by design: its span is never a latency sample, and
`mcpobs.subscription.streams` counts the streams open now. A stream that is quiet shows no
spans until it ends: telling "quiet" from "gone" would take a heartbeat, telemetry emitted
for nothing happening, which mcpobs deliberately does not send.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, cast

from mcp.shared.subscriptions import (
    LISTEN_STREAM_METHODS,
    SUBSCRIPTION_ID_META_KEY,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ToolsListChanged,
    event_from_wire,
    event_matches,
)
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Link, SpanContext, SpanKind, StatusCode

from mcpobs import semconv as S
from mcpobs._core import inventory as I
from mcpobs._core import privacy as _privacy
from mcpobs._core.guard import guarded
from mcpobs._core.patches import Patch
from mcpobs._core.telemetry import Telemetry

_MAX_NOTED = S.MAX_NOTED_PUBLISHES
"""Publish contexts remembered per stream; the SDK's own per-stream backlog is 1024 events.

Only events the stream will deliver are noted, and a full list takes no more: evicting the
oldest would drop the contexts of events still waiting in the SDK's backlog, and their
deliveries would then link to later publishes of an equal event (a burst did exactly that).
"""

_active: Telemetry | None = None
"""The telemetry of the running `instrument()`; None when mcpobs is not instrumented."""
_fallback: Telemetry | None = None


def _telemetry(implicit: bool) -> Telemetry | None:
    """Explicit wrappers record even without `instrument()` (on the global providers)."""
    global _fallback
    if _active is not None or implicit:
        return _active
    if _fallback is None:
        from mcpobs._core.config import Settings

        _fallback = Telemetry(Settings())
    return _fallback


class _Stream:
    """One open listen stream: its id and the publish contexts of events handed to it."""

    __slots__ = ("noted", "subscription_id", "wanted", "wanted_uris")

    def __init__(self, subscription_id: str, wanted: Any = None) -> None:
        self.subscription_id = subscription_id
        self.wanted = wanted
        self.wanted_uris = frozenset(getattr(wanted, "resource_subscriptions", None) or ())
        self.noted: deque[tuple[Any, SpanContext]] = deque()

    def note(self, event: Any, context: SpanContext) -> None:
        """Remember `event`'s publish context if the stream will deliver it and there is room."""
        if len(self.noted) < _MAX_NOTED and (
            self.wanted is None or event_matches(self.wanted, self.wanted_uris, event)
        ):
            self.noted.append((event, context))

    def take(self, event: Any) -> SpanContext | None:
        """The publish context of `event`, skipping events this stream filtered out."""
        while self.noted:
            noted, context = self.noted.popleft()
            if noted == event:
                return context
        return None


_stream: ContextVar[_Stream | None] = ContextVar("mcpobs_listen_stream", default=None)
"""Set by the listen-handler hook for the stream's task; read by subscribe and delivery."""


class ObservedSubscriptionBus:
    """A `SubscriptionBus` that records each publish and each delivery as spans.

    Wrap the bus you give `MCPServer` (publishing through the wrapper)::

        bus = ObservedSubscriptionBus(InMemorySubscriptionBus())
        server = MCPServer("shop", subscriptions=bus)
        await bus.publish(ToolsListChanged())

    Wrapping twice, or wrapping a bus `instrument()` also sees, records each event once.
    Publishes made on the inner bus object directly bypass the wrapper: they are still
    delivered and recorded on arrival, without a publish span to link to.
    """

    def __init__(self, bus: Any, *, _implicit: bool = False) -> None:
        self._implicit = _implicit
        self.bus: Any = bus.bus if isinstance(bus, ObservedSubscriptionBus) else bus
        """The wrapped bus."""

    async def publish(self, event: Any) -> None:
        """Publish through the wrapped bus inside a `publish {event}` span."""
        span = None
        with guarded("subscription publish start"):
            span = _start_publish(self._implicit, event)
        if span is None:
            return await self.bus.publish(event)
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            await self.bus.publish(event)
        except BaseException as exc:
            with guarded("subscription publish error"):
                telemetry = _telemetry(self._implicit)
                privacy = telemetry.privacy if telemetry is not None else _privacy.DEFAULT
                span.add_event(S.EVENT_EXCEPTION, privacy.exception_event(exc))
                span.set_status(StatusCode.ERROR, type(exc).__qualname__)
                span.set_attribute(S.ERROR_TYPE, type(exc).__qualname__)
            raise
        finally:
            otel_context.detach(token)
            with guarded("subscription publish end"):
                span.end()

    def subscribe(self, listener: Callable[[Any], None]) -> Callable[[], None]:
        """Register `listener` on the wrapped bus, noting each event's publish context for its stream."""
        stream = _stream.get()
        if stream is None:  # not a listen stream we know: nothing to link
            return self.bus.subscribe(listener)

        def observed(event: Any) -> None:
            with guarded("subscription listener"):
                context = trace.get_current_span().get_span_context()
                if context.is_valid:
                    stream.note(event, context)
            listener(event)

        return self.bus.subscribe(observed)

    @staticmethod
    def inject() -> dict[str, str]:
        """The current trace context as a small dict of strings, to send along with an event.

        Call it inside your bus's `publish` (the publish span is current there).
        """
        carrier: dict[str, str] = {}
        with guarded("subscription context inject"):
            propagate.inject(carrier)
        return carrier

    @staticmethod
    @contextmanager
    def extract(carrier: Mapping[str, str] | None) -> Generator[None, None, None]:
        """Make the publisher's context current while you hand an arrived event to the listeners."""
        token = None
        with guarded("subscription context extract"):
            if carrier:
                token = otel_context.attach(propagate.extract(dict(carrier)))
        try:
            yield
        finally:
            if token is not None:
                with guarded("subscription context detach"):
                    otel_context.detach(token)


def _event_kind(event: Any) -> S.SubscriptionEvent | None:
    if isinstance(event, ToolsListChanged):
        return S.SubscriptionEvent.TOOLS_LIST_CHANGED
    if isinstance(event, PromptsListChanged):
        return S.SubscriptionEvent.PROMPTS_LIST_CHANGED
    if isinstance(event, ResourcesListChanged):
        return S.SubscriptionEvent.RESOURCES_LIST_CHANGED
    if isinstance(event, ResourceUpdated):
        return S.SubscriptionEvent.RESOURCE_UPDATED
    return None


def _event_attributes(telemetry: Telemetry, kind: S.SubscriptionEvent, event: Any) -> dict[str, Any]:
    attrs: dict[str, Any] = {S.SUBSCRIPTION_EVENT: kind.value}
    if kind is S.SubscriptionEvent.RESOURCE_UPDATED:
        recorded = telemetry.privacy.uri(event.uri)  # an attribute, never a name
        if recorded is not None:
            attrs[S.MCP_RESOURCE_URI] = recorded
    return attrs


def _start_publish(implicit: bool, event: Any) -> Any:
    telemetry = _telemetry(implicit)
    kind = _event_kind(event)
    if telemetry is None or kind is None:
        return None
    telemetry.subscription_events.add(
        1, {S.SUBSCRIPTION_EVENT: kind.value, S.SUBSCRIPTION_DIRECTION: S.SubscriptionDirection.PUBLISHED.value}
    )
    return telemetry.tracer.start_span(
        S.publish_span_name(kind), kind=SpanKind.PRODUCER, attributes=_event_attributes(telemetry, kind, event)
    )


# -- the seams --------------------------------------------------------------------------------


def _delivered_event(notification: Any) -> tuple[str, Any] | None:
    """(subscription id, event) for a listen-stream event frame; None for anything else."""
    method = getattr(notification, "method", None)
    if method not in LISTEN_STREAM_METHODS:  # leaves out the acknowledgement
        return None
    params = notification.params
    meta = getattr(params, "meta", None) if params is not None else None
    subscription_id = (
        cast("Mapping[str, object]", meta).get(SUBSCRIPTION_ID_META_KEY) if isinstance(meta, Mapping) else None
    )
    if subscription_id is None:
        return None
    uri = getattr(params, "uri", None)
    event = event_from_wire(method, {"uri": uri} if uri is not None else None)
    return (str(subscription_id), event) if event is not None else None


def _start_delivery(telemetry: Telemetry, notification: Any) -> Any:
    found = _delivered_event(notification)
    if found is None:
        return None
    subscription_id, event = found
    kind = _event_kind(event)
    if kind is None:
        return None
    telemetry.subscription_events.add(
        1, {S.SUBSCRIPTION_EVENT: kind.value, S.SUBSCRIPTION_DIRECTION: S.SubscriptionDirection.DELIVERED.value}
    )
    stream = _stream.get()
    published = stream.take(event) if stream is not None else None
    attrs = _event_attributes(telemetry, kind, event)
    if (recorded := telemetry.privacy.identifier(subscription_id)) is not None:
        attrs[S.SUBSCRIPTION_ID] = recorded  # the listening client chose it
    links = [Link(published)] if published is not None else None
    return telemetry.tracer.start_span(S.deliver_span_name(kind), kind=SpanKind.CONSUMER, attributes=attrs, links=links)


def patches(telemetry: Telemetry) -> list[Patch]:
    global _active
    _active = telemetry

    async def listen(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ListenHandler.__call__`: one open stream, counted while it is open."""
        token = None
        with guarded("listen stream open"):
            ctx = args[0] if args else kwargs["ctx"]
            params = args[1] if len(args) > 1 else kwargs.get("params")
            token = _stream.set(_Stream(str(ctx.request_id), getattr(params, "notifications", None)))
            telemetry.subscription_streams.add(1)
        try:
            return await wrapped(*args, **kwargs)
        finally:
            if token is not None:
                with guarded("listen stream close"):
                    telemetry.subscription_streams.add(-1)
                    _stream.reset(token)

    async def send_notification(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ServerSession.send_notification`: a span per event written to a listen stream."""
        span = None
        with guarded("subscription delivery start"):
            span = _start_delivery(telemetry, args[0] if args else kwargs["notification"])
        if span is None:
            return await wrapped(*args, **kwargs)
        try:
            return await wrapped(*args, **kwargs)
        except BaseException as exc:
            with guarded("subscription delivery error"):
                span.set_attribute(S.ERROR_TYPE, type(exc).__qualname__)
            raise
        finally:
            with guarded("subscription delivery end"):
                span.end()

    return [
        Patch.of(I.LISTEN_HANDLER, listen),
        Patch.of(I.SESSION_NOTIFY, send_notification),
    ]


def observe_bus(kwargs: dict[str, Any]) -> dict[str, Any]:
    """`MCPServer.__init__` keyword arguments with its bus observed (before the listen handler gets it)."""
    bus = kwargs.get("subscriptions")
    if bus is False or isinstance(bus, ObservedSubscriptionBus):
        return kwargs
    from mcp.server.subscriptions import InMemorySubscriptionBus

    inner = InMemorySubscriptionBus() if bus is None else bus
    return {**kwargs, "subscriptions": ObservedSubscriptionBus(inner, _implicit=True)}


def deactivate() -> None:
    """Called by `uninstrument()`: buses `instrument()` wrapped go quiet."""
    global _active
    _active = None
