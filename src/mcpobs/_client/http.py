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

from mcpobs._client import calls
from mcpobs._client.memory import SessionMemory
from mcpobs._core import inventory as I
from mcpobs._core.config import Settings
from mcpobs._core.guard import guarded, report
from mcpobs._core.outcome import is_cancellation
from mcpobs._core.patches import Patch
from mcpobs._core.session_id import session_attribute

_building: ContextVar[list[Any] | None] = ContextVar("mcpobs_client_transports", default=None)
_owners: weakref.WeakKeyDictionary[Any, SessionMemory] = weakref.WeakKeyDictionary()


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
            _owners[transport] = memory


def url_of(built: list[Any]) -> str | None:
    """The URL of the Streamable HTTP transport a session was built on, if it was."""
    for transport in built:
        url = getattr(transport, "url", None)
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
            status = int(response.status_code)
            if status >= 400:
                self._call.http_status = status
        except Exception as exc:
            report("client HTTP status", exc)
        return response

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self._cm.__aexit__(*exc_info)


def patches(settings: Settings) -> list[Patch]:
    def transport_init(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> None:
        wrapped(*args, **kwargs)
        built = _building.get()
        if built is not None:
            built.append(instance)

    def session_id_from(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> None:
        wrapped(*args, **kwargs)
        with guarded("client session id"):
            memory = _owners.get(instance)
            if memory is not None and instance.session_id is not None:
                value = session_attribute(instance.session_id, settings)
                if value is not None:
                    memory.session_id = value

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
