"""`fastmcp.Client` 3.x (on mcp 1.x): one CLIENT span per call, and its in-memory transport's server.

A FastMCP 3 `Client` drives mcp 1.x's `ClientSession` over the SDK's own transports (its HTTP,
SSE and stdio transports call `streamable_http_client`, `sse_client` and `stdio_client`), so
every request already gets mcpobs's span, labels and duration there (`_client/sdk1/session.py`,
`_client/sdk1/transports.py`). Two things are its own:

- its CLIENT span around each call (`fastmcp.client.telemetry.client_span`), opened on the
  global tracer provider whenever one is set: 3.4 has no switch for it, so the tracer that span
  asks for is a no-op one. FastMCP still injects its caller's context into `_meta`; the SDK
  call below then carries mcpobs's span there (`_client/sdk1/meta.py`), so the server's span is a child of the
  call's one span;
- `FastMCPTransport` (a server object in the same process) serves the session over memory
  streams: the server object is the session's server, whose catalog it shares.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.trace import NoOpTracer

from mcpobs._client import http
from mcpobs._core import inventory as I
from mcpobs._core.guard import guarded
from mcpobs._core.patches import Patch

_NO_SPANS = NoOpTracer()


def no_fastmcp_span(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """Wraps `fastmcp.client.telemetry.get_tracer`: FastMCP's client span is a no-op (its context carries on)."""
    return _NO_SPANS


def memory_connect(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """Wraps `FastMCPTransport.connect_session`: the session it builds serves `transport.server`."""
    with guarded("fastmcp client memory"):
        server = getattr(instance, "server", None)
        if server is not None:
            http.built(server, None)
    return wrapped(*args, **kwargs)


def patches() -> list[Patch]:
    return [
        Patch.of(I.FASTMCP3_CLIENT_TRACER, no_fastmcp_span),
        Patch.of(I.FASTMCP3_MEMORY, memory_connect, setup=True),
    ]
