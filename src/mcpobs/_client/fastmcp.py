"""`fastmcp.Client`: one CLIENT span per call, and the connection learned from its transport.

A `fastmcp.Client` drives the SDK's `ClientSession`, whose seams already give each request
mcpobs's CLIENT span. Three things are FastMCP's own:

- its CLIENT span around each call (`fastmcp.client.telemetry.client_span`): the tracer it
  asks for is taken under FastMCP's documented `suppress_fastmcp_telemetry()`, so it opens
  none and mcpobs's span is the call's one (FastMCP still injects trace context in `_meta`;
  the SDK's injection then puts mcpobs's span there);
- where the server is: its transport (`StreamableHttpTransport.url`, a stdio transport, or
  in memory), read when the session it built negotiates (`Client._negotiate`), so every
  request carries `server.*`/`network.*` and, over HTTP, a `traceparent` header;
- the session's life: from that negotiation to the end of `Client._session_runner`,
  recorded in `mcp.client.session.duration`.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

from mcpobs import semconv as S
from mcpobs._client import bare, memory
from mcpobs._core import inventory as I
from mcpobs._core.guard import guarded
from mcpobs._core.labels import PIPE, Network
from mcpobs._core.names import bounded_version
from mcpobs._core.outcome import is_cancellation
from mcpobs._core.patches import Patch
from mcpobs._core.telemetry import Telemetry

_started: weakref.WeakKeyDictionary[Any, tuple[Any, float]] = weakref.WeakKeyDictionary()
"""Per `fastmcp.Client`: its current session and when it was ready."""


def _network(transport: Any) -> Network | None:
    """The labels of a FastMCP client transport: HTTP from its URL, stdio, or None in memory."""
    from fastmcp.client.transports import StdioTransport, StreamableHttpTransport

    if isinstance(transport, StreamableHttpTransport):
        return memory.connection_network(transport.url)
    if isinstance(transport, StdioTransport):
        return PIPE
    return None


def _session(client: Any) -> Any:
    return getattr(getattr(client, I.FASTMCP_CLIENT_STATE.attribute, None), "session", None)


def patches(telemetry: Telemetry) -> list[Patch]:
    def no_fastmcp_span(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        from fastmcp.telemetry import suppress_fastmcp_telemetry

        with suppress_fastmcp_telemetry():
            return wrapped(*args, **kwargs)

    async def negotiate(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        with guarded("fastmcp client connection"):
            session = _session(instance)
            if session is not None:
                remembered = memory.remembered(session)
                if remembered is None or remembered.network is None:
                    network = _network(instance.transport)
                    if network is not None:
                        memory.remember_network(
                            session, network, memory.connection_peer(getattr(instance.transport, "url", None))
                        )
                bare.disown(session)  # its duration is the Client's, recorded below
                _started[instance] = (session, time.perf_counter())
        return await wrapped(*args, **kwargs)

    async def session_runner(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        failure: BaseException | None = None
        try:
            return await wrapped(*args, **kwargs)
        except BaseException as exc:
            failure = exc
            raise
        finally:
            with guarded("fastmcp client session end"):
                started = _started.pop(instance, None)
                if started is not None:
                    session, start = started
                    telemetry.client_session_duration.record(time.perf_counter() - start, _labels(session, failure))

    return [
        Patch.of(I.FASTMCP_CLIENT_TRACER, no_fastmcp_span),
        Patch.of(I.FASTMCP_CLIENT_NEGOTIATE, negotiate),
        Patch.of(I.FASTMCP_CLIENT_RUNNER, session_runner),
    ]


def _labels(session: Any, failure: BaseException | None) -> dict[str, Any]:
    labels: dict[str, Any] = {S.MCP_PROTOCOL_VERSION: bounded_version(getattr(session, "protocol_version", None))}
    remembered = memory.remembered(session)
    if remembered is not None and remembered.network is not None:
        labels.update(remembered.network.labels)
    if failure is not None and not is_cancellation(failure):
        labels[S.ERROR_TYPE] = type(failure).__qualname__
    return labels
