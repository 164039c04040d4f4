"""What mcpobs remembers per `ClientSession`: where its server is, and the tools it listed.

One weak dictionary keyed by the session, so nothing outlives it. The connection
(server.address/port, network.transport) is learned from `Client`; over Streamable HTTP the
HTTP version and a legacy session's id are learned from the transport's responses, once, and
kept in the same span attributes and metric labels (`network`), never recomputed per request.
The listing keeps each tool as last listed and replaces it by its schema fingerprint the
first time it is called (most listed tools are never called).
"""

from __future__ import annotations

import weakref
from typing import Any
from urllib.parse import urlsplit

from opentelemetry.trace import SpanContext

from mcpobs import semconv as S
from mcpobs._core import labels as _labels
from mcpobs._core.labels import Network

MAX_LISTED = 4096
_LABELLED = (S.NETWORK_TRANSPORT, S.NETWORK_PROTOCOL_NAME, S.NETWORK_PROTOCOL_VERSION, S.SERVER_ADDRESS, S.SERVER_PORT)
"""The connection attributes that are also metric labels (the session id is not)."""


class SessionMemory:
    __slots__ = ("connection", "handshake", "listing", "network")

    def __init__(self) -> None:
        self.connection: dict[str, Any] | None = None
        """Span attributes of every request of the session; replaced, never mutated."""
        self.network: Network | None = None
        """The metric labels among them."""
        self.listing: dict[str, Any] | None = None
        self.handshake: SpanContext | None = None
        """The span of the session's last `initialize` or `server/discover`: what it negotiated."""

    def learn(self, name: str, value: Any) -> None:
        """A connection attribute learned on the way (HTTP version, session id), once."""
        connection = self.connection or {}
        if connection.get(name) == value:
            return
        self.connection = {**connection, name: value}
        if name in _LABELLED:
            self.network = _labels.network({k: v for k, v in self.connection.items() if k in _LABELLED})


_sessions: weakref.WeakKeyDictionary[Any, SessionMemory] = weakref.WeakKeyDictionary()


def _memory(session: Any) -> SessionMemory:
    memory = _sessions.get(session)
    if memory is None:
        memory = _sessions[session] = SessionMemory()
    return memory


def connection(session: Any) -> dict[str, Any] | None:
    memory = _sessions.get(session)
    return memory.connection if memory is not None else None


def remembered(session: Any) -> SessionMemory | None:
    """What is remembered of this session, if anything (one lookup per request)."""
    return _sessions.get(session)


def network(session: Any) -> Network | None:
    memory = _sessions.get(session)
    return memory.network if memory is not None else None


def remember_connection(session: Any, server: object) -> SessionMemory | None:
    attrs = connection_attributes(server)
    if not attrs:
        return None
    memory = _memory(session)
    memory.connection = attrs
    memory.network = _labels.network(attrs)  # all of them are labels: transport, protocol, server
    return memory


def remember_handshake(session: Any, span_context: SpanContext) -> None:
    _memory(session).handshake = span_context


def handshake(session: Any) -> SpanContext | None:
    memory = _sessions.get(session)
    return memory.handshake if memory is not None else None


def remember_listing(session: Any, result: Any) -> None:
    memory = _memory(session)
    listing = memory.listing
    if listing is None:
        listing = memory.listing = {}
    for tool in getattr(result, "tools", None) or ():
        if len(listing) >= MAX_LISTED and tool.name not in listing:
            break
        listing[tool.name] = tool


def fingerprint(memory: SessionMemory, name: object) -> str | None:
    """The schema fingerprint of tool `name` as this session last listed it."""
    listing = memory.listing
    if not listing or not isinstance(name, str):
        return None
    held = listing.get(name)
    if held is None or isinstance(held, str):
        return held
    from mcpobs._core.contract import schema_fingerprint

    wire = held.model_dump(by_alias=True, mode="json", exclude_none=True)
    listing[name] = found = schema_fingerprint(wire.get("inputSchema"), wire.get("outputSchema"))
    return found


def connection_attributes(server: object) -> dict[str, Any]:
    """Attributes for the server a `Client` was given: a URL, stdio parameters, or an in-process server."""
    from mcp.client.stdio import StdioServerParameters

    if isinstance(server, str):
        parts = urlsplit(server)
        # `Client(url)` talks through the SDK's own HTTP client, which speaks HTTP/1.1 only.
        attrs: dict[str, Any] = {
            S.NETWORK_TRANSPORT: "tcp",
            S.NETWORK_PROTOCOL_NAME: "http",
            S.NETWORK_PROTOCOL_VERSION: "1.1",
        }
        if parts.hostname:
            attrs[S.SERVER_ADDRESS] = parts.hostname
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
        if port:
            attrs[S.SERVER_PORT] = port
        return attrs
    if isinstance(server, StdioServerParameters):
        return {S.NETWORK_TRANSPORT: "pipe"}
    return {}
