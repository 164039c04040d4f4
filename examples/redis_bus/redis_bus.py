"""A `SubscriptionBus` over Redis pub/sub, so several server replicas share one event stream.

Every replica publishes to one Redis channel and hands each message it reads to its own
listen streams. The publisher's trace context travels with the event: `inject()` in
`publish`, `extract()` around the local fan-out. Wrapped in `mcpobs.ObservedSubscriptionBus`,
a delivery on replica B is then linked to the publish on replica A.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

import redis.asyncio as redis
from mcp.shared.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)

from mcpobs import ObservedSubscriptionBus

logger = logging.getLogger(__name__)

_KINDS: dict[str, ServerEvent] = {
    "tools_list_changed": ToolsListChanged(),
    "prompts_list_changed": PromptsListChanged(),
    "resources_list_changed": ResourcesListChanged(),
}


def encode(event: ServerEvent) -> dict[str, Any]:
    if isinstance(event, ResourceUpdated):
        return {"kind": "resource_updated", "uri": event.uri}
    return {"kind": next(kind for kind, value in _KINDS.items() if value == event)}


def decode(data: dict[str, Any]) -> ServerEvent:
    if data["kind"] == "resource_updated":
        return ResourceUpdated(uri=data["uri"])
    return _KINDS[data["kind"]]


class RedisSubscriptionBus:
    """Publishes to one Redis channel; a reader task fans arriving events out to local listeners."""

    def __init__(self, url: str, channel: str = "mcp:events") -> None:
        self._redis = redis.from_url(url)
        self._channel = channel
        self._listeners: dict[object, Callable[[ServerEvent], None]] = {}
        self._reader: asyncio.Task[None] | None = None

    async def publish(self, event: ServerEvent) -> None:
        self._start_reader()
        # The publish span (opened by ObservedSubscriptionBus) is current here: send it along.
        message = {"event": encode(event), "trace": ObservedSubscriptionBus.inject()}
        await self._redis.publish(self._channel, json.dumps(message))

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        self._start_reader()
        token = object()
        self._listeners[token] = listener
        return lambda: self._listeners.pop(token, None)

    def _start_reader(self) -> None:
        if self._reader is None:
            self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        pubsub = self._redis.pubsub()
        await pubsub.subscribe(self._channel)
        async for message in pubsub.listen():
            if message.get("type") != "message":
                continue
            try:
                data = json.loads(message["data"])
                event = decode(data["event"])
            except (ValueError, KeyError, TypeError):
                logger.warning("ignoring a malformed event on %s", self._channel)
                continue
            # The publisher's context is current while local listeners run, so each delivery
            # on this replica links to the publish on the replica that made it.
            with ObservedSubscriptionBus.extract(data.get("trace")):
                for listener in list(self._listeners.values()):
                    try:
                        listener(event)
                    except Exception:  # listeners must not raise; isolate them anyway
                        logger.exception("subscription listener raised")
