"""mcp 1.x's client transports: where a session's server is, and what each request's POST met.

A 1.x host opens a transport (`stdio_client`, `sse_client`, `streamable_http_client` or the
deprecated `streamablehttp_client`, or `create_connected_server_and_client_session` in memory)
and builds a `ClientSession` on its streams, as 2.x's bare sessions are built (`bare`). Each
transport is caught where every caller reaches it, not by the function's name (frameworks
import those by name): the process `stdio_client` spawns, the `StreamableHTTPTransport` it
builds, the SSE connection `sse_client` opens; the session made next in the same task takes it:
its network labels, its server's catalog, its duration. A framework that runs the transport in
a task of its own (mcp-use does, for each transport) builds the session elsewhere: a Streamable
HTTP transport is then found by the write stream its `post_writer` serves, which is the
session's own, at the session's first request (`carrying`); stdio and SSE transports run in
such a task leave no such trace, and their sessions have no network labels.

Over Streamable HTTP each request's POST runs in the transport's own task, not the caller's:
the call is found by its JSON-RPC id among its session's requests in flight (`_client/sdk1/session.py`
files it), and told its HTTP status (a 404 the SDK answers with its "Session terminated"
error, a 4xx/5xx it raises) and what the POST raised; a POST that raises tears the whole
transport down, so every request in flight on it was cut by that outage. The same task copies
the request's `traceparent` (and `tracestate`; the baggage only with `send_baggage=True`) from
its `_meta` into the POST's headers, as 2.x sends them. The HTTP version is learned from the
`initialize` response (Streamable HTTP) or the SSE stream's response.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any, cast

from mcpobs import semconv as S
from mcpobs._client import bare, http, memory
from mcpobs._client.calls import ClientCall
from mcpobs._client.memory import InFlight
from mcpobs._client.sdk1 import meta as _meta
from mcpobs._core import inventory as I
from mcpobs._core import labels as _labels
from mcpobs._core.config import Settings
from mcpobs._core.guard import guarded, report
from mcpobs._core.outcome import is_cancellation
from mcpobs._core.patches import Patch
from mcpobs.semconv import NETWORK_PROTOCOL_VERSION

_posting: ContextVar[tuple[ClientCall | None, dict[str, str]] | None] = ContextVar("mcpobs_client_post", default=None)
"""In a Streamable HTTP transport's POST: the call it carries (if known) and the trace headers to add."""


_serving: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
"""A Streamable HTTP transport's write stream -> the transport, for one no session took in its own task."""


def carrying(session: Any) -> Any:
    """The Streamable HTTP transport a session writes to, if one is known only by its stream (`post_writer`)."""
    stream = getattr(session, I.SESSION1_WRITE_STREAM.attribute, None)
    return _serving.get(stream) if stream is not None else None


def _message_of(args: Any, kwargs: Any) -> Any:
    ctx = args[0] if args else kwargs.get("ctx")
    return ctx.session_message.message.root


def _version_of(response: Any) -> str | None:
    spoken = getattr(response, "http_version", None)
    version = spoken.removeprefix("HTTP/") if isinstance(spoken, str) else None
    return version if version in _labels.HTTP_VERSIONS else None


def memory_connect(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """Wraps `create_connected_server_and_client_session(server)`: an in-memory session's server."""
    with guarded("client memory server"):
        server = args[0] if args else kwargs.get("server")
        if server is not None:
            http.built(server, None)
    return wrapped(*args, **kwargs)


def patches(settings: Settings) -> list[Patch]:
    baggage = settings.send_baggage

    async def post(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `StreamableHTTPTransport._handle_post_request`: one message's POST, in the transport's task."""
        token = None
        filed = None
        try:
            message = _message_of(args, kwargs)
            remembered = http.owner(instance)
            filed = memory.in_flight(remembered) if remembered is not None else None
            request_id = getattr(message, "id", None)
            call = filed.get(request_id) if filed and request_id is not None else None
            token = _posting.set((call, _meta.trace_of(getattr(message, "params", None), baggage)))
        except Exception as exc:
            report("client HTTP post", exc)
        try:
            return await wrapped(*args, **kwargs)
        except BaseException as exc:
            if not is_cancellation(exc) and filed is not None:
                with guarded("client transport failure"):
                    _torn_down(filed, exc)
            raise
        finally:
            if token is not None:
                _posting.reset(token)

    def prepare_headers(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> object:
        """Wraps `StreamableHTTPTransport._prepare_headers`: the trace headers of the POST being made."""
        headers: object = wrapped(*args, **kwargs)
        posting = _posting.get()
        if posting is not None and posting[1]:
            _add(headers, posting[1])
        return headers

    async def session_terminated(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `_send_session_terminated_error`: the POST got a 404, the server knows no such session."""
        posting = _posting.get()
        if posting is not None and posting[0] is not None:
            posting[0].http_status = 404
        return await wrapped(*args, **kwargs)

    async def sse_response(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `_handle_sse_response`: a request's answer on its POST's event stream (and its resumption).

        mcp 1.x waits forever for an answer whose stream ended without it and gave nothing to resume
        from (the server stopped under the request: its grace cancelled it once the stream began, so
        no 500 could say so). The call is then `stopped`, ended and counted now, as the server's is.
        """
        posting = _posting.get()
        call = posting[0] if posting is not None else None
        if call is None:
            return await wrapped(*args, **kwargs)
        stream = _Stream()
        token = _streaming.set(stream)
        try:
            result = await wrapped(*args, **kwargs)
        finally:
            _streaming.reset(token)
        if not stream.answered:
            with guarded("client stream closed"):
                call.closed_under()
        return result

    async def sse_event(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `_handle_sse_event`: True when the event was the request's answer."""
        complete = await wrapped(*args, **kwargs)
        if complete is True:
            stream = _streaming.get()
            if stream is not None:
                stream.answered = True
        return complete

    def session_id_from(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> None:
        """Wraps `_maybe_extract_session_id_from_response`, which reads the `initialize` response."""
        wrapped(*args, **kwargs)
        with guarded("client session id"):
            http.note_session_id(instance, settings)
            posting = _posting.get()
            call = posting[0] if posting is not None else None
            network = call.labels_key[4] if call is not None else None
            if call is not None and network is not None and NETWORK_PROTOCOL_VERSION not in network.labels:
                http.learn_version(call, network, args[0] if args else kwargs.get("response"))

    def sse_connect(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `sse_within_origin(client, url)` (1.30) / `aconnect_sse(client, "GET", url)` in `sse_client`."""
        cm = wrapped(*args, **kwargs)
        try:
            url = kwargs.get("url")
            if url is None:
                url = next((a for a in args[1:] if isinstance(a, str) and a != "GET"), None)
            if isinstance(url, str):
                return _Connecting(cm, url)
        except Exception as exc:
            report("client SSE connection", exc)
        return cm

    def sse_post(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `request_within_origin` in `sse_client`: a message POST carries its trace headers."""
        try:
            body = kwargs.get("json")
            trace = _meta.trace_of(
                cast("Mapping[str, object]", body).get("params") if isinstance(body, Mapping) else None, baggage
            )
            if trace:
                held = kwargs.get("headers")
                kwargs = {**kwargs, "headers": {**trace, **(cast("Mapping[str, str]", held) if held else {})}}
        except Exception as exc:
            report("client SSE trace header", exc)
        return wrapped(*args, **kwargs)

    async def post_writer(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `StreamableHTTPTransport.post_writer`, started once per transport with its write stream."""
        with guarded("client transport streams"):
            stream = args[3] if len(args) > 3 else kwargs.get("write_stream")
            if http.owner(instance) is None and stream is not None:  # no session took it in the host's task
                _serving[stream] = instance
        return await wrapped(*args, **kwargs)

    return [
        Patch.of(I.STDIO1_SPAWN, bare.stdio_spawn, setup=True),
        Patch.of(I.HTTP1_POST_WRITER, post_writer, setup=True),
        Patch.of(I.MEMORY1_CONNECT, memory_connect, setup=True),
        Patch.of(I.HTTP1_TRANSPORT_INIT, http.transport_init, setup=True),
        Patch.of(I.HTTP1_POST, post),
        Patch.of(I.HTTP1_HEADERS, prepare_headers),
        Patch.of(I.HTTP1_SSE_RESPONSE, sse_response),
        Patch.of(I.HTTP1_SSE_EVENT, sse_event),
        Patch.of(I.HTTP1_TERMINATED, session_terminated),
        Patch.of(I.HTTP1_SESSION_ID, session_id_from),
        Patch.of(I.SSE1_CONNECT, sse_connect, setup=True),
        Patch.of(I.SSE1_POST, sse_post),
    ]


class _Stream:
    """A request's event stream being read: whether its answer came on it."""

    __slots__ = ("answered",)

    def __init__(self) -> None:
        self.answered = False


_streaming: ContextVar[_Stream | None] = ContextVar("mcpobs_client_sse", default=None)


def _add(headers: object, trace: dict[str, str]) -> None:
    if isinstance(headers, dict):
        cast("dict[str, str]", headers).update(trace)


def _torn_down(filed: InFlight, exc: BaseException) -> None:
    """A POST raised: the SDK's task group cancels every request in flight on the transport.

    The request whose POST it was gets the HTTP status, if it had one; each request gets the
    failure, so its cancellation reads as the outage it was, not the caller giving up; so does
    a request sent after (the session's `InFlight.failure`).
    """
    if filed.failure is None:
        filed.failure = exc
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    posting = _posting.get()
    own = posting[0] if posting is not None else None
    if own is not None and isinstance(status, int) and status >= 400:
        own.http_status = status
        own.server_stopped = S.HEADER_STOPPED in getattr(response, "headers", {})
    for call in list(filed.values()):
        if call.failure is None:
            call.failure = exc


class _Connecting:
    """`sse_client`'s connection: once its GET is answered, where the next session's server is."""

    __slots__ = ("_cm", "_url")

    def __init__(self, cm: Any, url: str) -> None:
        self._cm = cm
        self._url = url

    async def __aenter__(self) -> Any:
        source = await self._cm.__aenter__()
        with guarded("client SSE connection"):
            version = _version_of(getattr(source, "response", None))
            peer = memory.connection_peer(self._url)
            http.built(self._url, _labels.http_network(version, _labels.server_peer(peer)))
        return source

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self._cm.__aexit__(*exc_info)
