"""What mcpobs remembers per `ClientSession`: where its server is, the tools and prompts it listed.

One weak dictionary keyed by the session, so nothing outlives it. The connection's network
labels (server.address/port, network.transport and protocol) are learned from `Client`, once,
and shared by every request's span attributes and metric labels; over Streamable HTTP a legacy
session's id is learned from the transport's responses (a span attribute, never a label).
The listing keeps each tool as last listed and replaces it by its schema and contract
fingerprints the first time it is called (most listed tools are never called).
"""

from __future__ import annotations

import weakref
from typing import Any

from opentelemetry.trace import SpanContext

from mcpobs import semconv as S
from mcpobs._client import catalog as _catalog
from mcpobs._client.catalog import ServerCatalog
from mcpobs._core import labels as _labels
from mcpobs._core import uri as _uri
from mcpobs._core.labels import Network

MAX_LISTED = 4096


class SessionMemory:
    __slots__ = (
        "answering",
        "catalog",
        "handshake",
        "in_flight",
        "listing",
        "negotiated",
        "network",
        "peer",
        "session_id",
    )

    def __init__(self) -> None:
        self.network: Network | None = None
        """Where the server is and how it is reached: span attributes and metric labels."""
        self.peer: dict[str, Any] | None = None
        """The server's address and port as given, on spans, when `network` had to bound them (`_OTHER`)."""
        self.answering: Network | None = None
        """The same without the server's address: the labels of this side answering the server."""
        self.session_id: str | None = None
        """`mcp.session.id` (or its keyed hash) of a legacy Streamable HTTP session."""
        self.listing: dict[str, Any] | None = None
        self.catalog: ServerCatalog | None = None
        """What the sessions to this session's server listed (`catalog`): the names that name spans,
        the schemas a failed call is judged by. The session's own when its server is not known."""
        self.handshake: SpanContext | None = None
        """The span of the session's last `initialize` or `server/discover`: what it negotiated."""
        self.negotiated: str | None = None
        """The revision the session's `initialize` settled on, for a session that keeps none itself (mcp 1.x)."""
        self.in_flight: InFlight | None = None
        """The session's requests sent and not yet answered, by JSON-RPC id, where its transport
        reports each request's POST from a task of its own (mcp 1.x Streamable HTTP)."""


class InFlight(dict[object, Any]):
    """A session's requests in flight, by JSON-RPC id, and what tore its transport down, if anything."""

    __slots__ = ("failure",)

    def __init__(self) -> None:
        super().__init__()
        self.failure: BaseException | None = None


_sessions: weakref.WeakKeyDictionary[Any, SessionMemory] = weakref.WeakKeyDictionary()


def _memory(session: Any) -> SessionMemory:
    memory = _sessions.get(session)
    if memory is None:
        memory = _sessions[session] = SessionMemory()
    return memory


def remembered(session: Any) -> SessionMemory | None:
    """What is remembered of this session, if anything (one lookup per request)."""
    return _sessions.get(session)


def remember_connection(session: Any, server: object, by_url: bool = False) -> SessionMemory | None:
    """`by_url`: `server` is the URL of a transport the host built (its HTTP client may speak any version).

    The session then shares its server's catalog (an in-process server has no network labels,
    but a catalog all the same)."""
    remember_server(session, server)
    network = connection_network(server, by_url)
    if network is None:
        return None
    return remember_network(session, network, connection_peer(server))


def remember_server(session: Any, server: object) -> SessionMemory:
    """The session talks to `server` (a URL, stdio parameters, a server object): its catalog is that server's."""
    memory = _memory(session)
    if memory.catalog is None:
        memory.catalog = _catalog.for_server(_catalog.server_key(server))
    return memory


def catalog_of(session: Any) -> ServerCatalog:
    """The catalog a session's listings go to: its server's, else its own."""
    memory = _memory(session)
    found = memory.catalog
    if found is None:
        found = memory.catalog = ServerCatalog()
    return found


def remember_network(session: Any, network: Network, peer: dict[str, Any] | None = None) -> SessionMemory:
    """Where the session's server is (a framework's client knows it from its own transport).

    `peer`: its address and port as given (`connection_peer`), kept for spans when the labels bound them.
    """
    memory = _memory(session)
    memory.network = network
    if peer and any(network.labels.get(k) != v for k, v in peer.items()):
        memory.peer = peer
    memory.answering = _labels.network(
        {k: v for k, v in network.labels.items() if k not in (S.SERVER_ADDRESS, S.SERVER_PORT)}
    )
    return memory


def version_of(session: Any, remembered: SessionMemory | None) -> object:
    """The revision the session speaks: its own record (mcp 2.x), else what its handshake answered (1.x)."""
    version = getattr(session, "protocol_version", None)
    if version is None and remembered is not None:
        return remembered.negotiated
    return version


def remember_version(session: Any, version: object) -> None:
    """What a session that keeps no revision of its own (mcp 1.x) negotiated."""
    if isinstance(version, str):
        _memory(session).negotiated = version


def in_flight(remembered: SessionMemory) -> InFlight:
    """The session's requests in flight, by id (`SessionMemory.in_flight`), made on first use."""
    found = remembered.in_flight
    if found is None:
        found = remembered.in_flight = InFlight()
    return found


def remember_handshake(session: Any, span_context: SpanContext) -> None:
    _memory(session).handshake = span_context


def remember_listing(session: Any, result: Any) -> None:
    memory = _memory(session)
    _catalog.learn_tools(catalog_of(session), result)
    listing = memory.listing
    if listing is None:
        listing = memory.listing = {}
    for tool in getattr(result, "tools", None) or ():
        if len(listing) >= MAX_LISTED and tool.name not in listing:
            break
        listing[tool.name] = tool


def remember_prompts(session: Any, result: Any) -> None:
    _catalog.learn_prompts(catalog_of(session), result)


def fingerprints(memory: SessionMemory, name: object) -> tuple[str, str] | None:
    """The (schema, contract) fingerprints of tool `name` as this session last listed it; for a tool
    this session never listed, as any session to the same server last listed it (`ServerCatalog`):
    a host that opens a session per call lists in one and calls in the next."""
    if not isinstance(name, str):
        return None
    listing = memory.listing
    held = listing.get(name) if listing else None
    if held is None and memory.catalog is not None:
        listing = memory.catalog.listed
        held = listing.get(name)
    if held is None or isinstance(held, tuple) or listing is None:
        return held  # type: ignore[return-value]
    from mcpobs._core.contract import contract_fingerprint, schema_fingerprint

    wire = held.model_dump(by_alias=True, mode="json", exclude_none=True)
    found = (schema_fingerprint(wire.get("inputSchema"), wire.get("outputSchema")), contract_fingerprint(wire))
    listing[name] = found
    return found


def connection_peer(server: object) -> dict[str, Any]:
    """`server.address` and `server.port` of a URL a client was given (none for anything else).

    Read by `uri.address`: a user name or password in the URL, escaped or not, is never the address.
    """
    if not isinstance(server, str):
        return {}
    host, port = _uri.address(server)
    where: dict[str, Any] = {}
    if host:
        where[S.SERVER_ADDRESS] = host
    if port:
        where[S.SERVER_PORT] = port
    return where


def connection_network(server: object, by_url: bool = False) -> Network | None:
    """The network labels of what a `Client` was given: a URL, stdio parameters, or an in-process server."""
    from mcp.client.stdio import StdioServerParameters

    if isinstance(server, str):
        # `Client(url)` talks through the SDK's own HTTP client, which speaks HTTP/1.1 only.
        return _labels.http_network(None if by_url else "1.1", _labels.server_peer(connection_peer(server)))
    if isinstance(server, StdioServerParameters):
        return _labels.PIPE
    return None
