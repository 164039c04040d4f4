"""mcp 1.x: a span for each subscription event a server sends its client.

1.x has no subscription bus and no `subscriptions/listen` stream: a client asks with
`resources/subscribe` (a request, recorded as any other), and the server sends each session
`notifications/resources/updated` itself (`ServerSession.send_resource_updated`), as it sends
the `list_changed` notifications. Each such notification sent is one `deliver {event}` span
(PRODUCER: the server sends it; there is no bus to publish on nor stream to consume from, so
no publish span and no link) under whatever is current where it is sent (the request that
caused it, or nothing), and one `mcpobs.subscription.events` count with direction
`delivered`. `mcpobs.subscription.streams` stays at zero: 1.x has no streams to count.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.trace import Span, SpanKind

from mcpobs import semconv as S
from mcpobs._core import inventory as I
from mcpobs._core.guard import guarded, report
from mcpobs._core.patches import Patch
from mcpobs._core.telemetry import Telemetry
from mcpobs.semconv import SubscriptionEvent

_EVENTS = {
    "notifications/resources/updated": SubscriptionEvent.RESOURCE_UPDATED,
    "notifications/resources/list_changed": SubscriptionEvent.RESOURCES_LIST_CHANGED,
    "notifications/tools/list_changed": SubscriptionEvent.TOOLS_LIST_CHANGED,
    "notifications/prompts/list_changed": SubscriptionEvent.PROMPTS_LIST_CHANGED,
}


def _start(telemetry: Telemetry, kind: SubscriptionEvent, notification: Any) -> Span:
    attrs: dict[str, Any] = {S.SUBSCRIPTION_EVENT: kind.value}
    if kind is SubscriptionEvent.RESOURCE_UPDATED:
        uri = getattr(notification.params, "uri", None)
        recorded = telemetry.privacy.uri(str(uri)) if uri is not None else None  # an attribute, never a name
        if recorded is not None:
            attrs[S.MCP_RESOURCE_URI] = recorded
    telemetry.subscription_events.add(
        1, {S.SUBSCRIPTION_EVENT: kind.value, S.SUBSCRIPTION_DIRECTION: S.SubscriptionDirection.DELIVERED.value}
    )
    return telemetry.tracer.start_span(S.deliver_span_name(kind), kind=SpanKind.PRODUCER, attributes=attrs)


def patches(telemetry: Telemetry) -> list[Patch]:
    def send_notification(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ServerSession.send_notification(notification, related_request_id=None)`.

        Not a coroutine of its own: every other notification (progress, log messages) gets the
        SDK's own coroutine back, one frame and one coroutine fewer.
        """
        try:
            notification = args[0] if args else kwargs["notification"]
            root = getattr(notification, "root", notification)
            kind = _EVENTS.get(root.method)
        except Exception as exc:
            report("subscription delivery start", exc)
            kind = None
        if kind is None:
            return wrapped(*args, **kwargs)
        return _delivering(telemetry, kind, root, wrapped(*args, **kwargs))  # pyright: ignore[reportPossiblyUnboundVariable]

    return [Patch.of(I.SERVER1_NOTIFY, send_notification)]


async def _delivering(telemetry: Telemetry, kind: SubscriptionEvent, notification: Any, sending: Any) -> Any:
    span = None
    with guarded("subscription delivery start"):
        span = _start(telemetry, kind, notification)
    try:
        return await sending
    except BaseException as exc:
        if span is not None:
            with guarded("subscription delivery error"):
                span.set_attribute(S.ERROR_TYPE, type(exc).__qualname__)
        raise
    finally:
        if span is not None:
            with guarded("subscription delivery end"):
                span.end()
