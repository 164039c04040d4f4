"""mcp 1.x over HTTP: a session's id and labels from its transport, and the boundary of apps mcpobs did not build.

- Streamable HTTP: the session manager runs each session inside its transport's `connect()`;
  that block is labelled (tcp, http) and carries the transport's `mcp-session-id`, so the
  run it drives (`_server/sdk1/sessions.py`) knows both from its start, `initialize` included.
- SSE: each GET stream's `connect_sse()` block is labelled the same way; its session id is in
  the query of each message POST, read by the first request that records it.
- The transport boundary (`transport.TransportBoundary`) is added to the apps FastMCP 1 and
  FastMCP 3 build (`_hosts/`). A lowlevel `Server` has no app of its own: its host mounts the
  session manager's `handle_request` (or SSE's `handle_post_message`) itself, so those are
  wrapped in a boundary too, which stands aside when an app's boundary already watches.
"""

from __future__ import annotations

from typing import Any

from mcpobs._core import inventory as I
from mcpobs._core.guard import guarded
from mcpobs._core.labels import Network, http_network
from mcpobs._core.patches import Patch
from mcpobs._core.telemetry import Telemetry
from mcpobs._server import exchange as _exchange
from mcpobs._server import state as _state
from mcpobs._server import transport as _transport
from mcpobs._server.identity import server_attributes
from mcpobs._server.sdk1 import sessions as _sessions

_HTTP = http_network(None)


class _SessionBlock:
    """An async context manager whose block runs one HTTP session: its labels and its id."""

    __slots__ = ("_id_token", "_inner", "_network", "_raw_id", "_token")

    def __init__(self, inner: Any, network: Network, raw_id: str | None) -> None:
        self._inner = inner
        self._network = network
        self._raw_id = raw_id
        self._token: Any = None
        self._id_token: Any = None

    async def __aenter__(self) -> Any:
        self._token = _state.label_transport(self._network)
        self._id_token = _sessions.transport_session(self._raw_id)
        try:
            return await self._inner.__aenter__()
        except BaseException:
            self._reset()
            raise

    async def __aexit__(self, *exc: Any) -> Any:
        try:
            return await self._inner.__aexit__(*exc)
        finally:
            self._reset()

    def _reset(self) -> None:
        _sessions.forget_transport_session(self._id_token)
        _state.unlabel_transport(self._token)


def patches(telemetry: Telemetry) -> list[Patch]:
    def connect(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `StreamableHTTPServerTransport.connect()` (stateless: no id)."""
        return _SessionBlock(wrapped(*args, **kwargs), _HTTP, getattr(instance, "mcp_session_id", None))

    def connect_sse(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `SseServerTransport.connect_sse(scope, receive, send)`."""
        with guarded("sse stream"):
            _exchange.carries_answers()  # the answers to this session's POSTs are written here
        return _SessionBlock(wrapped(*args, **kwargs), _HTTP, None)

    def bounded(server_of: Any) -> Any:
        async def handle(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
            """Wraps an ASGI entry `(scope, receive, send)` with the boundary, unless an app's already watches."""
            if _exchange.watching():
                return await wrapped(*args, **kwargs)

            async def app(scope: Any, receive: Any, send: Any) -> None:
                await wrapped(scope, receive, send)

            described = server_attributes(server_of(instance), telemetry)
            boundary = _transport.TransportBoundary(app, telemetry, described)
            return await boundary(*args, **kwargs)

        return handle

    return [
        Patch.of(I.SERVER1_HTTP_CONNECT, connect),
        Patch.of(I.SERVER1_SSE_CONNECT, connect_sse),
        Patch.of(I.SERVER1_HTTP_HANDLE, bounded(_manager_server)),
        Patch.of(I.SERVER1_SSE_POST, bounded(_no_server)),
    ]


def _manager_server(manager: Any) -> Any:
    """The `Server` a `StreamableHTTPSessionManager` serves."""
    return getattr(manager, "app", None)


def _no_server(transport: Any) -> Any:
    """An `SseServerTransport` does not know its server."""
    return None
