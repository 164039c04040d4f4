"""`mcp.server.session.duration`: one sample per handshake connection, when it closes.

A session is a connection driven by the handshake loop (stdio, legacy Streamable HTTP, the
legacy in-memory transport): its `Connection` is built before `initialize` and lives until the
transport closes. A 2026-07-28 request is born ready on a connection of its own and opens no
session. The runner's construction starts the clock (`setup.ServerSetup.runner_init` calls
`started`); a callback on the connection's teardown stack, which every driver unwinds in its
`finally`, stops it. The cost is per session, never per request.
"""

from __future__ import annotations

import sys
import time
import weakref
from contextvars import ContextVar
from typing import Any

from mcpobs import semconv as S
from mcpobs._core import inventory as I
from mcpobs._core.config import Settings
from mcpobs._core.guard import guarded
from mcpobs._core.labels import Network, http_network
from mcpobs._core.names import bounded_version
from mcpobs._core.outcome import is_cancellation
from mcpobs._core.patches import Patch
from mcpobs._core.session_id import session_attribute
from mcpobs._core.telemetry import Telemetry
from mcpobs._server import state as _state


class _Session:
    __slots__ = ("network", "start")

    def __init__(self, start: float, network: dict[str, Any]) -> None:
        self.start = start
        self.network = network


_ids: weakref.WeakKeyDictionary[Any, tuple[str, Settings, str | None]] = weakref.WeakKeyDictionary()
"""Per connection: (its session id, the settings, the `mcp.session.id` value recorded for it)."""


def session_id(session: Any, settings: Settings) -> str | None:
    """`mcp.session.id` for a request of this `ServerSession`: computed once per connection.

    On every recorded request's path, so `connection_session_id`'s body is inlined here.
    """
    connection = getattr(session, I.SESSION_CONNECTION.attribute, None)
    raw = getattr(connection, "session_id", None)
    if raw is None:
        return None  # stdio, 2026-07-28 and in-process connections have none
    found = _ids.get(connection)
    if found is None or found[0] != raw or found[1] is not settings:
        found = _ids[connection] = (raw, settings, session_attribute(raw, settings))
    return found[2]


def connection_session_id(connection: Any, settings: Settings) -> str | None:
    """`mcp.session.id` for a request on this `Connection`: the value `session_id` gives its requests."""
    raw = getattr(connection, "session_id", None)
    if raw is None:
        return None
    found = _ids.get(connection)
    if found is None or found[0] != raw or found[1] is not settings:
        found = _ids[connection] = (raw, settings, session_attribute(raw, settings))
    return found[2]


# -- a request the server sends its client ---------------------------------------------------------

_asking: ContextVar[Any] = ContextVar("mcpobs_asking_connection", default=None)
"""The connection a server-to-client request is being sent on, while `send_request` sends it."""


def asking_session_id(settings: Settings) -> str | None:
    """`mcp.session.id` of the session a server-to-client request is sent on, in this context.

    Set only while the SDK's typed send (`ServerSession.send_request`, which `elicit`,
    `create_message`, `list_roots` and `send_ping` use, or `Connection.send_request` on the
    standalone stream) runs: nothing rides the request path for a question most requests never
    ask. None for a raw dispatcher call, and for a session with no id (stdio, in process, a
    stateless HTTP server).
    """
    connection = _asking.get()
    return None if connection is None else connection_session_id(connection, settings)


_session_asks = _state.while_running(_asking, lambda session: getattr(session, I.SESSION_CONNECTION.attribute, None))
"""Wraps `ServerSession.send_request`: the request it sends is on this session's connection."""

_connection_asks = _state.while_running(_asking, lambda connection: connection)
"""Wraps `Connection.send_raw_request`: a request on the connection's standalone stream."""


_open: weakref.WeakKeyDictionary[Any, _Session] = weakref.WeakKeyDictionary()

_HTTP = http_network(None)
"""A Streamable HTTP session's labels until its `initialize` shows the HTTP version (`note_network`)."""
"""True while the Streamable HTTP manager drives a legacy session in this context."""


def note_network(connection: Any, network: Network | None) -> None:
    """The session's network attributes, as its `initialize` request saw them (HTTP only)."""
    session = _open.get(connection)
    if session is not None and network is not None:
        session.network = network.labels


def started(connection: Any, telemetry: Telemetry) -> None:
    """Called as each `ServerRunner` is built: a connection not yet initialized opens a session.

    The session's end is a callback on the connection's own teardown stack, which every
    driver unwinds when the transport closes: nothing runs per request.
    """
    if connection.initialized.is_set() or connection in _open:
        return  # born ready: a 2026-07-28 request, not a session
    transport = _state.transport()  # stdio or a legacy HTTP session (see `patches`); None in process
    network = transport.labels if transport is not None else {}
    session = _open[connection] = _Session(time.perf_counter(), network)
    ref = weakref.ref(connection)

    def ended() -> None:
        failure = sys.exc_info()[1]  # unwound from the driver's `finally`: what ended the session
        with guarded("session end"):
            closed = ref()
            # A connection that never completed `initialize` (a request the transport refused
            # before any session existed) negotiated nothing: no session, no sample.
            if closed is not None and _open.pop(closed, None) is session and _negotiated(closed):
                _record(telemetry, closed, session, failure)

    connection.exit_stack.callback(ended)


def _negotiated(connection: Any) -> bool:
    return bool(getattr(connection, "initialize_accepted", False)) or connection.initialized.is_set()


def patches() -> list[Patch]:
    """The Streamable HTTP manager's loop for a legacy session (its session has HTTP labels), and
    the server's typed sends to its client (they know their session)."""
    return [
        Patch.of(I.SERVE_LOOP, _state.on_transport(_HTTP)),
        Patch.of(I.SESSION_ASKS, _session_asks),
        Patch.of(I.CONNECTION_ASKS, _connection_asks),
    ]


def _record(telemetry: Telemetry, connection: Any, session: _Session, failure: BaseException | None) -> None:
    labels = {S.MCP_PROTOCOL_VERSION: bounded_version(connection.protocol_version), **session.network}
    if failure is not None and not is_cancellation(failure):
        labels[S.ERROR_TYPE] = type(failure).__qualname__
    telemetry.server_session_duration.record(time.perf_counter() - session.start, labels)
