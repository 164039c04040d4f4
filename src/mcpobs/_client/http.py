"""What a `Client` learns from its Streamable HTTP transport: where the server is, a legacy
session's id, and how each request's POST went.

The transport is built while `Client._build_session` runs (for `Client(url)` and for a
`Client(streamable_http_client(url, http_client=...))` alike), so a contextvar set around that
call catches it and ties it to the session being built; its URL gives the session's network
labels. The session id arrives with the `initialize` response (once per session, on the
handshake era only); it then becomes the session's `mcp.session.id` span attribute, never a
label.

Each request's POST runs in a task started in the sender's context, where the request's
`ClientCall` is current. Its HTTP error status (the SDK answers the caller with a stand-in
JSON-RPC code: -32603 for a 401, 403, 502 or 503, -32601 for a 404) and anything the POST
raised (no connection, TLS, the OAuth flow: the SDK's task group then cancels the caller)
are noted on that call, which classifies itself from them.
"""

from __future__ import annotations

import weakref
from contextvars import ContextVar, Token
from typing import Any, cast

from mcpobs import semconv as S
from mcpobs._client import calls, memory
from mcpobs._client.memory import SessionMemory
from mcpobs._core import inventory as I
from mcpobs._core import labels as _labels
from mcpobs._core.config import Settings
from mcpobs._core.guard import guarded, report
from mcpobs._core.labels import Network
from mcpobs._core.outcome import is_cancellation
from mcpobs._core.patches import Patch
from mcpobs._core.session_id import session_attribute

_building: ContextVar[list[Any] | None] = ContextVar("mcpobs_client_transports", default=None)
_owners: weakref.WeakKeyDictionary[Any, SessionMemory] = weakref.WeakKeyDictionary()
_built: ContextVar[tuple[object, Network | None, Any] | None] = ContextVar("mcpobs_bare_transport", default=None)
"""(server, network labels, HTTP transport or None) of the transport a host last built itself in
this context, outside a `Client`: the next bare `ClientSession` made here is on it (`bare`)."""


def building() -> bool:
    """Whether a `Client` is building its session in this context."""
    return _building.get() is not None


def built(server: object, network: Network | None, transport: Any = None) -> None:
    """A host built a transport in this context (`streamable_http_client`, `stdio_client`, in memory)."""
    if _building.get() is None:
        _built.set((server, network, transport))


class StdioSpawn:
    """A stdio server spawned while a `Client` builds its session (on a transport object)."""

    __slots__ = ("parameters",)

    def __init__(self, parameters: Any) -> None:
        self.parameters = parameters


def spawned(command: object, argv: Any) -> None:
    """`stdio_client` spawns `command`: for the `Client` being built here, or the next bare session."""
    from mcp.client.stdio import StdioServerParameters

    if not isinstance(command, str):
        return
    parameters = StdioServerParameters(command=command, args=[a for a in argv or () if isinstance(a, str)])
    collecting = _building.get()
    if collecting is not None:
        collecting.append(StdioSpawn(parameters))
    else:
        _built.set((parameters, _labels.PIPE, None))


def stdio_of(built: list[Any]) -> Any:
    """The parameters of the stdio server a session was built on, if it was."""
    for transport in built:
        if isinstance(transport, StdioSpawn):
            return transport.parameters
    return None


def take_built() -> tuple[object, Network | None, Any] | None:
    """The transport last built here for a bare session, once (None inside a `Client`'s build)."""
    pending = _built.get()
    if pending is None or _building.get() is not None:
        return None
    _built.set(None)
    return pending


def start_building() -> Token[list[Any] | None]:
    """Called before `Client._build_session`: collect the transports it builds."""
    return _building.set([])


def finish_building(token: Token[list[Any] | None]) -> list[Any]:
    """The transports built since `start_building`."""
    built = _building.get() or []
    _building.reset(token)
    return built


def own(built: list[Any], memory: SessionMemory | None) -> None:
    """Tie the transports built for a session to its memory."""
    if memory is not None:
        for transport in built:
            if not isinstance(transport, StdioSpawn):
                _owners[transport] = memory


def url_of(built: list[Any]) -> str | None:
    """The URL of the Streamable HTTP transport a session was built on, if it was."""
    for transport in built:
        url = None if isinstance(transport, StdioSpawn) else getattr(transport, "url", None)
        if isinstance(url, str):
            return url
    return None


class _Watched:
    """`stream_within_origin(...)` whose response status, when an error, is noted on the call."""

    __slots__ = ("_call", "_cm")

    def __init__(self, cm: Any, call: calls.ClientCall) -> None:
        self._cm = cm
        self._call = call

    async def __aenter__(self) -> Any:
        response = await self._cm.__aenter__()
        try:
            call = self._call
            status = int(response.status_code)
            if status >= 400:
                call.http_status = status
                call.server_stopped = S.HEADER_STOPPED in response.headers
            network = call.labels_key[4]
            if network is not None and S.NETWORK_PROTOCOL_VERSION not in network.labels:
                learn_version(call, network, response)
        except Exception as exc:
            report("client HTTP status", exc)
        return response

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self._cm.__aexit__(*exc_info)


def learn_version(call: calls.ClientCall, network: Network, response: Any) -> None:
    """The HTTP version the server answered with, for a transport on the host's own HTTP client.

    Such a client may speak HTTP/1.1 or HTTP/2, so the session's labels start without a version;
    the first response says which (`httpx.Response.http_version`), and the session keeps it.
    """
    if network.labels.get(S.NETWORK_PROTOCOL_NAME) != "http":
        return
    spoken = getattr(response, "http_version", None)
    version = spoken.removeprefix("HTTP/") if isinstance(spoken, str) else None
    if version not in _labels.HTTP_VERSIONS:
        return
    where = {k: v for k, v in network.labels.items() if k in (S.SERVER_ADDRESS, S.SERVER_PORT)}
    learned = _labels.http_network(version, where)
    if memory.remembered(call.session) is not None:
        memory.remember_network(call.session, learned)
    call.labels_key = (*call.labels_key[:4], learned)
    if call.span.is_recording():
        call.span.set_attribute(S.NETWORK_PROTOCOL_VERSION, version)


def transport_init(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> None:
    """Wraps `StreamableHTTPTransport.__init__`: a transport for the `Client` being built, or the host's own."""
    wrapped(*args, **kwargs)
    collecting = _building.get()
    if collecting is not None:
        collecting.append(instance)
        return
    with guarded("bare client transport"):
        url = getattr(instance, "url", None)
        if isinstance(url, str):  # the host's own `streamable_http_client`: its HTTP client may speak any version
            built(url, memory.connection_network(url, by_url=True), instance)


def owner(transport: Any) -> SessionMemory | None:
    """What is remembered of the session a transport carries (`own`)."""
    return _owners.get(transport)


def note_session_id(transport: Any, settings: Settings) -> None:
    """The legacy session id the transport just learned, on its session (a span attribute, never a label)."""
    memory = _owners.get(transport)
    if memory is not None and transport.session_id is not None:
        value = session_attribute(transport.session_id, settings)
        if value is not None:
            memory.session_id = value


def patches(settings: Settings) -> list[Patch]:
    def session_id_from(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> None:
        wrapped(*args, **kwargs)
        with guarded("client session id"):
            note_session_id(instance, settings)

    def stream_within_origin(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        cm = wrapped(*args, **kwargs)
        try:  # not `guarded`: this runs on every POST, and a try costs nothing
            call = calls.current()
            if call is not None and _method(kwargs) == call.method:
                return _Watched(cm, call)
        except Exception as exc:
            report("client HTTP status", exc)
        return cm

    async def post(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        try:
            return await wrapped(*args, **kwargs)
        except BaseException as exc:
            if not is_cancellation(exc):
                with guarded("client transport failure"):
                    call = calls.current()
                    if call is not None and call.failure is None:
                        call.failure = exc
            raise

    return [
        Patch.of(I.HTTP_TRANSPORT_INIT, transport_init, setup=True),
        Patch.of(I.HTTP_POST, post),
        Patch.of(I.HTTP_STATUS, stream_within_origin),
        Patch.of(I.HTTP_SESSION_ID, session_id_from),
    ]


def _method(kwargs: Any) -> object:
    body = kwargs.get("json")
    return cast("dict[str, object]", body).get("method") if isinstance(body, dict) else None
