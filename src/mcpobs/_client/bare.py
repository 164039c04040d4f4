"""A bare `ClientSession`, built by the host on a transport it opened itself, as agent frameworks do.

llama-index and openai-agents open `streamable_http_client(url)` (or `stdio_client(params)`)
and build a `ClientSession` on its streams: no `Client`, so nothing tells mcpobs where the
server is. The transport does: `streamable_http_client` builds a `StreamableHTTPTransport`
(its URL), `stdio_client` spawns the server's command line, `InMemoryTransport` holds the
server object. Each is built in the host's own task, just before the session, so the last one
built in this context is noted (`built`) and the next `ClientSession` made here takes it
(`session_init`): its network labels, its server's catalog, its `traceparent` header, its
legacy session id. The session's life, from entering it to leaving it, is recorded in
`mcp.client.session.duration` as a `Client`'s is (a session that a `Client` or a
`fastmcp.Client` builds is theirs to record).
"""

from __future__ import annotations

import time
import weakref
from typing import Any

from mcpobs._client import http, memory
from mcpobs._client.lifetime import session_labels
from mcpobs._core import inventory as I
from mcpobs._core.guard import guarded
from mcpobs._core.patches import Patch
from mcpobs._core.telemetry import Telemetry

_started: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()
"""Bare sessions entered: when."""
_bare: weakref.WeakSet[Any] = weakref.WeakSet()
"""Sessions built on a transport the host opened (not by a `Client`)."""


def disown(session: Any) -> None:
    """A framework's client records this session's duration itself (`fastmcp.Client`)."""
    _started.pop(session, None)
    _bare.discard(session)


def session_init(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> None:
    """Wraps `ClientSession.__init__`: a session built on a transport the host just built here is bare."""
    wrapped(*args, **kwargs)
    with guarded("bare client session"):
        pending = http.take_built()
        if pending is None:
            return  # no transport built here, or a `Client` building its own (`seams.build_session`)
        server, network, transport = pending
        remembered = memory.remember_server(instance, server)
        if network is not None:
            memory.remember_network(instance, network)
        if transport is not None:
            http.own([transport], remembered)
        _bare.add(instance)


def adopt(session: Any, server: object, network: Any, transport: Any) -> None:
    """A session found on a transport a host built in another task (mcp-use runs each transport
    in a task of its own): what `session_init` would have noted, its life counted from now."""
    remembered = memory.remember_server(session, server)
    if network is not None:
        memory.remember_network(session, network, memory.connection_peer(server))
    http.own([transport], remembered)
    _bare.add(session)
    _started.setdefault(session, time.perf_counter())


async def session_enter(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """Wraps `ClientSession.__aenter__`: a bare session's life starts."""
    start = time.perf_counter()
    result = await wrapped(*args, **kwargs)
    if instance in _bare:
        _started[instance] = start
    return result


def session_exit(telemetry: Telemetry) -> Any:
    """The wrapper of `ClientSession.__aexit__`: a bare session's life ends, in its duration."""

    async def leave(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        start = _started.pop(instance, None) if _started else None
        try:
            return await wrapped(*args, **kwargs)
        finally:
            if start is not None:
                with guarded("bare client session end"):
                    failure = args[1] if len(args) > 1 else kwargs.get("exc_val")
                    labels = session_labels(instance, failure)
                    telemetry.client_session_duration.record(time.perf_counter() - start, labels)  # type: ignore[operator]

    return leave


def stdio_spawn(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """Wraps the function `stdio_client` spawns its server with: the command line is the server."""
    with guarded("client stdio server"):
        command = kwargs.get("command", args[0] if args else None)
        http.spawned(command, kwargs.get("args", args[1] if len(args) > 1 else None))
    return wrapped(*args, **kwargs)


def memory_connect(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    with guarded("bare client memory"):
        if not http.building():
            http.built(getattr(instance, I.MEMORY_TRANSPORT_SERVER.attribute, None) or instance, None)
    return wrapped(*args, **kwargs)


def patches(telemetry: Telemetry) -> list[Patch]:
    return [
        Patch.of(I.SESSION_INIT, session_init, setup=True),
        Patch.of(I.SESSION_ENTER, session_enter),
        Patch.of(I.SESSION_EXIT, session_exit(telemetry)),
        Patch.of(I.STDIO_SPAWN, stdio_spawn, setup=True),
        Patch.of(I.MEMORY_CONNECT, memory_connect, setup=True),
    ]
