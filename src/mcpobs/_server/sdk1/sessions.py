"""mcp 1.x: a server session, from `Server.run` to its end: its server, id, transport and duration.

On 1.x one `Server.run` (FastMCP 3: its `LowLevelServer.run`) drives one `ServerSession`: the
process on stdio, the GET stream on SSE, initialize to DELETE (or the idle timeout) on stateful
Streamable HTTP, one POST when stateless. The run wrapper sets a `Serving` for everything the
run drives, so the session's receive loop and every request task know which server they serve
(the `initialize` span needs its server, and 1.x's session does not know it), the session's id
and transport labels (set by the transport around the run: `_server/sdk1/http.py`, stdio's block),
and when it started. When the run ends, a session that completed `initialize` records
`mcp.server.session.duration` (a run the transport discarded, such as the one a 2.x client's
`server/discover` probe opens over HTTP, negotiated nothing and is no session). The clock
starts as the run starts, so it includes entering the server's lifespan (which 1.x enters per run).
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, cast

from mcpobs import semconv as S
from mcpobs._core.config import Settings
from mcpobs._core.guard import guarded
from mcpobs._core.names import bounded_version
from mcpobs._core.outcome import is_cancellation
from mcpobs._core.session_id import session_attribute
from mcpobs._core.telemetry import Telemetry
from mcpobs._server import state as _state


class Serving:
    """One run of a server: one 1.x `ServerSession`."""

    __slots__ = ("_recorded", "network", "observer", "raw_id", "server", "session", "start")

    def __init__(self, server: Any, observer: Any, network: dict[str, Any], raw_id: str | None) -> None:
        self.server = server
        self.observer = observer
        """The server's `ServerObserver` (`_server/sdk1/dispatch.py`), or None when it is not recorded."""
        self.session: Any = None
        """The `ServerSession`, once its `initialize` is seen."""
        self.network = network
        self.raw_id = raw_id
        """The transport's session id (Streamable HTTP's `mcp-session-id`, SSE's `session_id`), if any."""
        self._recorded: tuple[str, Settings, str | None] | None = None
        self.start = time.perf_counter()

    def session_id(self, settings: Settings) -> str | None:
        """`mcp.session.id` for this session's spans: computed once (a keyed hash is not free)."""
        raw = self.raw_id
        if raw is None:
            return None
        found = self._recorded
        if found is None or found[0] != raw or found[1] is not settings:
            found = self._recorded = (raw, settings, session_attribute(raw, settings))
        return found[2]


_serving: ContextVar[Serving | None] = ContextVar("mcpobs_serving1", default=None)

current = _serving.get
"""The run (server session) this context belongs to, if a wrapped run drives it."""

_session_id: ContextVar[str | None] = ContextVar("mcpobs_transport_session_id", default=None)

transport_session = _session_id.set
"""The transport's session id for the run about to start in this context (`_server/sdk1/http.py`); returns a token."""

forget_transport_session = _session_id.reset


def session_id(session: Any, settings: Settings) -> str | None:
    """`mcp.session.id` for a request of this session, when its run is the current one."""
    serving = _serving.get()
    if serving is None or (serving.session is not None and serving.session is not session):
        return None
    return serving.session_id(settings)


def run_wrapper(telemetry: Telemetry, observer_of: Callable[[Any], Any]) -> Any:
    """Wraps `Server.run` (and FastMCP 3's own `run`): a `Serving` for the session it drives."""

    async def run(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        token = None
        serving = None
        with guarded("session start"):
            transport = _state.transport()
            network = transport.labels if transport is not None else {}
            serving = Serving(instance, observer_of(instance), network, _session_id.get())
            token = _serving.set(serving)
        try:
            return await wrapped(*args, **kwargs)
        finally:
            failure = sys.exc_info()[1]
            if token is not None:
                _serving.reset(token)
            if serving is not None:
                with guarded("session end"):
                    _ended(telemetry, serving, failure)

    return run


_revisions: tuple[frozenset[str], str] | None = None
"""(the revisions the installed 1.x SDK answers with, its latest): read once."""


def negotiated(session: Any) -> str | None:
    """The revision a 1.x session runs at: what its client asked for when the SDK supports it, else
    the SDK's latest (1.x keeps no record of the answer it gave). None before `initialize`."""
    global _revisions
    params = session.client_params
    if params is None:
        return None
    if _revisions is None:
        supported: Any = importlib.import_module("mcp.shared.version").SUPPORTED_PROTOCOL_VERSIONS  # mcp 1.x only
        latest: Any = importlib.import_module("mcp.types").LATEST_PROTOCOL_VERSION
        _revisions = (frozenset(cast("list[str]", supported)), cast(str, latest))
    requested = params.protocolVersion
    return requested if requested in _revisions[0] else _revisions[1]


def _ended(telemetry: Telemetry, serving: Serving, failure: BaseException | None) -> None:
    session = serving.session
    if session is None or session.client_params is None:
        return  # no handshake: the run negotiated nothing (a refused request, a stateless POST)
    labels: dict[str, Any] = {S.MCP_PROTOCOL_VERSION: bounded_version(negotiated(session)), **serving.network}
    if failure is not None and not is_cancellation(failure):
        labels[S.ERROR_TYPE] = type(failure).__qualname__
    telemetry.server_session_duration.record(time.perf_counter() - serving.start, labels)
