"""What a `Client(url)` learns from its Streamable HTTP transport: a legacy session's id.

The transport is built while `Client._build_session` runs, so a contextvar set around that
call catches it and ties it to the session being built. The session id arrives with the
`initialize` response (once per session, on the handshake era only); it then becomes the
session's `mcp.session.id` span attribute, never a label.
"""

from __future__ import annotations

import weakref
from contextvars import ContextVar, Token
from typing import Any

from mcpobs._client.memory import SessionMemory
from mcpobs._core.config import Settings
from mcpobs._core.guard import guarded
from mcpobs._core.patches import Patch
from mcpobs._core.session_id import session_attribute

_building: ContextVar[list[Any] | None] = ContextVar("mcpobs_client_transports", default=None)
_owners: weakref.WeakKeyDictionary[Any, SessionMemory] = weakref.WeakKeyDictionary()


def start_building() -> Token[list[Any] | None]:
    """Called before `Client._build_session`: collect the transports it builds."""
    return _building.set([])


def finish_building(token: Token[list[Any] | None], memory: SessionMemory | None) -> None:
    """Tie the transports built since `start_building` to the session's memory."""
    built = _building.get() or []
    _building.reset(token)
    if memory is not None:
        for transport in built:
            _owners[transport] = memory


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

    module = "mcp.client.streamable_http"
    return [
        Patch(module, "StreamableHTTPTransport.__init__", transport_init, setup=True),
        Patch(module, "StreamableHTTPTransport._maybe_extract_session_id_from_response", session_id_from),
    ]
