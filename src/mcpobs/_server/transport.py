"""The Streamable HTTP transport boundary: requests refused before any handler runs.

The transport answers a bad Host or Origin, a header that contradicts the body, an
unsupported protocol version, a parse error, a batch, an oversized body or an unknown
legacy session itself; none of them reach the server middleware. `instrument()` adds a
pure ASGI middleware to every app `Server.streamable_http_app()` returns. It watches the
response status and, for an error status the server middleware never saw, records one
SERVER span and one count in `mcpobs.server.requests`: `client_error` for a 4xx (at the
`version` boundary for -32022, `access` for a 401 or 403 from the auth middleware, else
`transport`), `server_error` for a 5xx such as a refused
session when `max_sessions` are open. Requests that reach the middleware add nothing here:
no second span per request.

A request that is not an MCP message adds nothing either: a `GET` or `HEAD` with no MCP
header (session id, protocol version, method) that does not ask for an event stream is a
health probe, a browser or a scanner, never an MCP client (which names `text/event-stream`
when it opens a stream). Nor do requests for the app's other routes (a health route, the
OAuth endpoints): only the MCP endpoint is watched (docs/failure-taxonomy.md, "Requests that
are not MCP").

The wrapper is pure ASGI (no `BaseHTTPMiddleware`), runs the app in the caller's task and
context, and passes scope, receive and send through, so what a handler sees is unchanged:
a contextvar the user's own middleware sets still reaches that request's tool.
"""

from __future__ import annotations

import json
import time
from typing import Any, cast

from opentelemetry import trace
from opentelemetry.trace import Link, SpanKind, StatusCode

from mcpobs import semconv as S
from mcpobs._core import inventory as I
from mcpobs._core import propagation as _propagation
from mcpobs._core import stop as _stop
from mcpobs._core.guard import guarded, logger
from mcpobs._core.labels import http_network
from mcpobs._core.methods import SPEC_METHODS
from mcpobs._core.names import bounded_version
from mcpobs._core.outcome import is_cancellation
from mcpobs._core.patches import Patch
from mcpobs._core.telemetry import Telemetry
from mcpobs._server import exchange as _ex
from mcpobs._server import incoming as _incoming
from mcpobs._server import state as _state
from mcpobs._server.identity import peer_attributes, server_attributes
from mcpobs.semconv import Boundary, Outcome

_MAX_ERROR_BODY = 4096
"""Bytes of an error response kept to read its JSON-RPC code; rejections are short."""
_HTTP_METHODS = frozenset({"GET", "POST", "DELETE"})
_PROBE_METHODS = frozenset({"GET", "HEAD"})
_MCP_HEADERS = ("mcp-session-id", "mcp-protocol-version", "mcp-method")
"""A request carrying any of these comes from an MCP client, whatever else it lacks."""
_EVENT_STREAM = "text/event-stream"

_active: Telemetry | None = None
"""The telemetry of the running `instrument()`; apps built earlier go quiet without it."""


class TransportBoundary:
    """ASGI middleware recording the requests the transport itself refused."""

    def __init__(
        self,
        app: Any,
        telemetry: Telemetry,
        server_attributes: dict[str, str],
        path: str | tuple[str, ...] | None = None,
    ) -> None:
        self.app = app
        self.telemetry = telemetry
        self.server_attributes = server_attributes
        paths = (path,) if isinstance(path, str) else path
        self.path = tuple(p.rstrip("/") for p in paths) if paths else None
        """The MCP endpoints (also when the app is mounted under a prefix), when the app serves other
        routes too (a FastMCP app's custom routes); an SSE app has two (its stream, its messages)."""

    def _on_endpoint(self, scope: Any) -> bool:
        if self.path is None:
            return True
        path: str = scope.get("path", "")
        for endpoint in self.path:
            if endpoint:  # also under a mount's prefix
                if path.rstrip("/").endswith(endpoint):
                    return True
            elif path.removeprefix(scope.get("root_path", "")).strip("/") == "":  # served at "/": the app's root only
                return True
        return False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or _active is not self.telemetry or not self._on_endpoint(scope):
            await self.app(scope, receive, send)
            return
        exchange = _ex.Exchange()
        start = time.time_ns()

        async def observe(message: Any) -> None:
            kind = message["type"]
            if kind == "http.response.start":
                exchange.status = int(message["status"])  # an int, though the app may send an HTTPStatus
                if exchange.status in (401, 403):
                    exchange.challenged = any(k.lower() == b"www-authenticate" for k, _ in message.get("headers", ()))
            elif kind == "http.response.body":
                if exchange.status >= 400 and len(exchange.body) < _MAX_ERROR_BODY:
                    exchange.body += message.get("body", b"")
                answer = _ex.answer_in(exchange, message.get("body", b"")) if exchange.answers else None
                if answer is not None:  # an HTTP+SSE session's stream writes an answer
                    gone = exchange.left
                    try:
                        await send(message)
                    except BaseException:
                        _ex.settled(answer, False)
                        raise
                    _ex.settled(answer, not gone)
                    return
                if not message.get("more_body", False) or (
                    exchange.settle is not None and _ex.REPLY_EVENT.search(message.get("body", b""), 0, 512)
                ):
                    # An ASGI server may drop a write to a closed connection silently (uvicorn):
                    # the client leaving before the last write began says it was not written; once
                    # it began, the server's own end of the stream may say disconnect (hypercorn).
                    gone = exchange.left
                    exchange.ended = exchange.ended or not message.get("more_body", False)
                    await send(message)  # raises, or is cancelled, if the connection goes meanwhile
                    exchange.written = not gone
                    _ex.settle(exchange)  # now, not when the app returns: its client may already have it
                    return
            await send(message)

        async def heard() -> Any:
            message = await receive()
            if message.get("type") == "http.disconnect":
                exchange.left = True
            return message

        token = _ex.enter(scope, exchange)
        try:
            await self.app(scope, heard, observe)
        except BaseException as exc:
            if exchange.status == 0 and is_cancellation(exc) and _stop.stopping():
                await _answer_stopped(send)
            raise
        finally:
            _ex.leave(scope, token)
            exchange.over = True
            _ex.settle(exchange)
            if exchange.status >= 400:
                with guarded("transport rejection"):
                    self._record(scope, exchange, start)

    def _record(self, scope: Any, exchange: _ex.Exchange, start: int) -> None:
        headers = _headers(scope)
        if _not_mcp(scope, headers):
            return  # a health probe: no span, no count (docs/failure-taxonomy.md)
        raw_method = headers.get("mcp-method")
        if exchange.reached is not None and (raw_method is None or raw_method in exchange.reached):
            return  # the server middleware saw this request and recorded it
        method = raw_method if raw_method in SPEC_METHODS else S.OTHER
        code = _rpc_code(exchange.body)
        if exchange.status == 401 or exchange.challenged:  # the auth middleware refused the caller
            boundary = Boundary.ACCESS  # (the transport's own 403 for a bad Origin stays `transport`)
        elif code == S.UNSUPPORTED_PROTOCOL_VERSION:
            boundary = Boundary.VERSION
        else:
            boundary = Boundary.TRANSPORT
        # A 4xx is the caller's mistake; a 5xx (e.g. 503, too many open sessions) is the server's.
        failed = exchange.status >= 500
        outcome = Outcome.SERVER_ERROR if failed else Outcome.CLIENT_ERROR
        version = bounded_version(headers.get("mcp-protocol-version"))
        attrs: dict[str, Any] = {
            S.MCP_METHOD_NAME: method,
            S.MCP_PROTOCOL_VERSION: version,
            **http_network(scope.get("http_version")).labels,
            S.HTTP_RESPONSE_STATUS_CODE: exchange.status,
            S.OUTCOME: outcome.value,
            S.FAILURE_BOUNDARY: boundary.value,
            **self.server_attributes,
        }
        labels: dict[str, Any] = {
            S.MCP_METHOD_NAME: method,
            S.OUTCOME: outcome.value,
            S.FAILURE_BOUNDARY: boundary.value,
        }
        peer_attributes(scope.get("client"), self.telemetry, attrs)
        if code is not None:
            attrs[S.RPC_RESPONSE_STATUS_CODE] = str(code)
        if failed:  # the HTTP conventions' error.type for a server failure is the status code
            attrs[S.ERROR_TYPE] = labels[S.ERROR_TYPE] = str(exchange.status)
        if method != S.OTHER:
            name = method
        else:  # nothing says which MCP method it was: name it by the HTTP method, bounded
            http_method = scope.get("method")
            name = http_method if http_method in _HTTP_METHODS else S.OTHER
        # The caller's trace, when its client sent it as a header (mcpobs's client does over
        # HTTP); the ambient span (an HTTP server span, say) is then linked, as the
        # conventions ask. Without one the rejection nests under whatever is current.
        caller = _propagation.extract(headers)
        parent, linked = _incoming.accepted(caller, self.telemetry, name, attrs)
        links = [linked] if linked is not None else None
        if caller is not None:
            ambient = trace.get_current_span().get_span_context()
            if ambient.is_valid:
                links = [*(links or ()), Link(ambient)]
        # A client_error is the caller's mistake: no error.type and no ERROR status (semantic-conventions-genai #404).
        if method not in self.telemetry.settings.excluded_methods:
            span = self.telemetry.start_span(name, parent, SpanKind.SERVER, attrs, links, start)
            if failed:
                span.set_status(StatusCode.ERROR, attrs[S.ERROR_TYPE])
            span.end()
        self.telemetry.server_requests.add(1, labels)


_STOPPED_500 = (
    {
        "type": "http.response.start",
        "status": 500,
        "headers": [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", b"21"),
            (b"connection", b"close"),
            (S.HEADER_STOPPED.encode(), b"1"),
        ],
    },
    {"type": "http.response.body", "body": b"Internal Server Error"},
)
"""What uvicorn answers an app that raised before answering, and the header that says why."""


async def _answer_stopped(send: Any) -> None:
    """The server's stop cancelled this request before it answered: send the 500 the ASGI server
    would, saying so (`S.HEADER_STOPPED`), so the client records `stopped` as the server did."""
    try:
        for message in _STOPPED_500:
            await send(message)
    except BaseException as exc:  # the connection is gone too: nothing to tell anyone
        logger.debug("mcpobs: answering a request the stop cut short failed: %r", exc)


def _not_mcp(scope: Any, headers: dict[str, str]) -> bool:
    """A GET or HEAD with no MCP header that does not ask for an event stream: no MCP client sends one.

    A wildcard Accept (curl's and kubelet's `*/*`) does not count as asking: the SDK would
    serve a stream for it, but an MCP client names the type.
    """
    return (
        scope.get("method") in _PROBE_METHODS
        and not any(name in headers for name in _MCP_HEADERS)
        and _EVENT_STREAM not in headers.get("accept", "").lower()
    )


def _headers(scope: Any) -> dict[str, str]:
    wanted = (b"mcp-method", b"mcp-protocol-version", b"mcp-session-id", b"accept", b"traceparent", b"tracestate")
    found: dict[str, str] = {}
    for key, value in scope.get("headers") or ():
        if key in wanted:
            found[key.decode("latin-1")] = value.decode("latin-1")
    return found


def _rpc_code(body: bytes) -> int | None:
    """The JSON-RPC error code of a rejection, when its body is one."""
    if not body.startswith(b"{"):
        return None
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return None
    code = cast("dict[str, object]", error).get("code") if isinstance(error, dict) else None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def activate(telemetry: Telemetry) -> None:
    """Apps built from now on (and earlier ones, if the same telemetry) record through `telemetry`."""
    global _active
    _active = telemetry


def install(app: Any, server: Any, telemetry: Telemetry, path: str | tuple[str, ...] | None = None) -> None:
    """Add the boundary to an app serving `server` (`Server.streamable_http_app()`, a framework's own).

    Without `path`, the boundary watches the route that serves the SDK's endpoint, found in the
    app's routes (the app may serve custom routes and OAuth endpoints beside it), or, if none is
    found, every request. An SSE app (mcp 1.x) names its two endpoints.
    """
    described = server_attributes(server, telemetry)
    if path is None:
        path = _endpoint_path(app)
    app.add_middleware(TransportBoundary, telemetry=telemetry, server_attributes=described, path=path)


def _endpoint_path(app: Any) -> str | None:
    """The path of the app's route to the SDK's Streamable HTTP endpoint (bare or behind its auth wrapper)."""
    located = I.resolve(I.HTTP_ASGI_APP)
    if located is None:
        return None
    endpoint_class = located[0]
    for route in getattr(app, "routes", None) or ():
        endpoint = getattr(route, "endpoint", None)
        if isinstance(endpoint, endpoint_class) or isinstance(getattr(endpoint, "app", None), endpoint_class):
            route_path = getattr(route, "path", None)
            return route_path.rstrip("/") if isinstance(route_path, str) else None
    return None


def uninstall(app: Any) -> None:
    """Take the boundary out of an app that has not served yet; one that has keeps it as a pass-through."""
    if getattr(app, "middleware_stack", None) is None:
        app.user_middleware = [m for m in app.user_middleware if m.cls is not TransportBoundary]


# -- stream transports (stdio) ------------------------------------------------------------------
#
# Over stdio no HTTP boundary sees a request the SDK refuses before the middleware: the
# 2026-07-28 envelope and version checks (`classify_inbound_request` in the serving loop), or
# a line that is not JSON-RPC (the transport hands the dispatcher an exception, which it
# drops). The same refusals over HTTP are spans at the transport boundary; here they are too.


def refused_in_session(method: object, meta: Any, code: int | None, boundary: Boundary | None = None) -> None:
    """One SERVER span and count for a request the SDK refused before any handler saw it: on a
    stream (stdio's envelope and version checks), or in a 1.x session (an unknown method,
    malformed params, a request before `initialize`), where no HTTP boundary sees it either.
    `boundary`: where it stopped, when the code does not say (`version` or `transport` otherwise)."""
    telemetry = _active
    if telemetry is None:
        return
    known = method if method in SPEC_METHODS else S.OTHER
    if boundary is None:
        boundary = Boundary.VERSION if code == S.UNSUPPORTED_PROTOCOL_VERSION else Boundary.TRANSPORT
    labels: dict[str, Any] = {
        S.MCP_METHOD_NAME: known,
        S.OUTCOME: Outcome.CLIENT_ERROR.value,
        S.FAILURE_BOUNDARY: boundary.value,
    }
    version = cast("dict[str, object]", meta).get(_PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    attrs: dict[str, Any] = {**labels, S.MCP_PROTOCOL_VERSION: bounded_version(version)}
    network = _state.transport()
    if network is not None:
        attrs.update(network.labels)
    if code is not None:
        attrs[S.RPC_RESPONSE_STATUS_CODE] = str(code)
    if known not in telemetry.settings.excluded_methods:
        caller = _propagation.extract(cast("dict[str, Any]", meta)) if isinstance(meta, dict) else None
        parent, linked = _incoming.accepted(caller, telemetry, str(known), attrs)
        links = [linked] if linked is not None else None
        telemetry.tracer.start_span(
            str(known), context=parent, kind=SpanKind.SERVER, attributes=attrs, links=links
        ).end()
    telemetry.server_requests.add(1, labels)


_PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


def _classify_inbound(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """Wraps the serving loop's `classify_inbound_request`: a refused request is recorded."""
    route = wrapped(*args, **kwargs)
    if getattr(route, "code", None) is not None and _active is not None:
        with guarded("stream refusal"):
            body: Any = args[0] if args else kwargs.get("body") or {}
            params: object = body.get("params")
            meta = cast("dict[str, object]", params).get("_meta") if isinstance(params, dict) else None
            refused_in_session(body.get("method"), meta, route.code)
    return route


async def _not_jsonrpc(exc: Exception) -> None:
    """The stdio dispatcher's observer for a line that is not JSON-RPC (nothing answers it)."""
    with guarded("stream refusal"):
        refused_in_session(None, None, None)


def _dispatcher_init(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> None:
    wrapped(*args, **kwargs)
    with guarded("stream refusal observer"):
        from mcpobs._core.labels import PIPE
        from mcpobs._server import state as _state

        if _active is not None and instance.on_stream_exception is None and _state.transport() is PIPE:
            instance.on_stream_exception = _not_jsonrpc


def patches() -> list[Patch]:
    """An app built before `instrument()` has no boundary: say so once, at its first request.

    And over stdio, the requests the serving loop refuses before the middleware (see above).
    And the `tools/list` the SDK runs itself to validate Mcp-Param headers is no client's request.
    """

    def unwatched(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        # Runs in the request's own context: the boundary, when it wraps this app, set the exchange.
        if _ex.current.get() is None and not _said_unwatched:
            with guarded("unwatched app warning"):
                _say_unwatched(args[0] if args else kwargs.get("scope"))
        return wrapped(*args, **kwargs)

    return [
        Patch.of(I.HTTP_ASGI_APP, unwatched),
        Patch.of(I.SCHEMA_LISTING, _state.sdk_internal),
        Patch.of(I.STREAM_CLASSIFY, _classify_inbound),
        Patch.of(I.DISPATCHER_INIT, _dispatcher_init),
    ]


_said_unwatched = False


def _say_unwatched(scope: Any) -> None:
    """Once per process: an HTTP app built before `instrument()` serves requests the boundary never sees."""
    global _said_unwatched
    if not isinstance(scope, dict) or cast("dict[str, object]", scope).get("type") != "http" or _active is None:
        return
    _said_unwatched = True
    logger.warning(
        "mcpobs: a Streamable HTTP app built before mcpobs.instrument() is serving requests: they get "
        "spans, but requests its transport refuses (bad Host or Origin, unsupported protocol version, "
        "too many sessions) are not recorded. Call mcpobs.instrument() before streamable_http_app()."
    )


def deactivate() -> None:
    """Called by `uninstrument()`: apps built while instrumented stop recording."""
    global _active
    _active = None
