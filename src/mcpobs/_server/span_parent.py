"""Where a request's SERVER span hangs: the trace context its message carries in `_meta`, else the
one in its HTTP request's `traceparent` header; an ambient span it does not hang from is linked."""

from __future__ import annotations

from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link

from mcpobs._core import propagation as _propagation
from mcpobs._core import runtime_context
from mcpobs._core.telemetry import Telemetry
from mcpobs._server import incoming as _incoming


def parent_and_links(
    ctx: Any, telemetry: Telemetry, name: str, attributes: Any
) -> tuple[Context | None, list[Link] | None]:
    """The span's parent context (None: a new trace, or the ambient span's) and its links.

    The caller's context is data: `_server/incoming.py` says what the server makes of it."""
    caller = _propagation.extract(ctx.meta)
    if caller is None and ctx.request is not None:
        caller = _http_parent(ctx.request)
    parent, linked = _incoming.accepted(caller, telemetry, name, attributes)
    links = [linked] if linked is not None else None
    if caller is not None:
        ambient = runtime_context.get_current_span().get_span_context()
        # e.g. an HTTP server span: link it, as the conventions ask. In process the
        # ambient span is the client span that is already the parent: no link to itself.
        if ambient.is_valid and ambient.span_id != trace.get_current_span(caller).get_span_context().span_id:
            links = [*(links or ()), Link(ambient)]
    return parent, links


def _http_parent(request: Any) -> Context | None:
    """The trace context in the `traceparent` header of the HTTP request that carried the message.

    Honoured when `_meta` carries none (a gateway, an HTTP-instrumented client, the Inspector's
    `--header`); `_meta` wins when both do: it belongs to the message, the header only to the
    exchange. When an HTTP server span (an ASGI instrumentation's) already continues that trace,
    it is current and stays the parent.
    """
    parent = _propagation.extract(getattr(request, "headers", None))
    if parent is None:
        return None
    ambient = trace.get_current_span().get_span_context()
    if ambient.is_valid and ambient.trace_id == trace.get_current_span(parent).get_span_context().trace_id:
        return None
    return parent
