"""One outbound request, and how its span is handed from the seam that opens it to the others.

A request passes several seams of the SDK's client (`ClientSession.call_tool`, then
`send_request`, then the dispatcher's `send_raw_request` and its `otel_span`). The first
seam that sees it opens a `ClientCall` and makes it current (`enter`); the seams below read
it with `current()` or `sending()` instead of opening a span of their own. That is the
whole hand-off: one contextvar holding the call, and the call's own span as the current
OpenTelemetry span.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, NamedTuple

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span

from mcpobs._core.guard import report

if TYPE_CHECKING:
    from mcpobs._client.rounds import Operation
    from mcpobs._core.outcome import Classification


class Outbound(NamedTuple):
    """What a client request hook gets for a request the SDK sends without a request object."""

    method: str
    params: Any = None


class ClientCall:
    """One outbound request (or notification) and its span."""

    __slots__ = (
        "awaiting_send",
        "cls",
        "context",
        "description",
        "elapsed",
        "fingerprint",
        "labels_key",
        "method",
        "op",
        "request_id",
        "session",
        "span",
        "start",
        "unlisted",
    )

    def __init__(self, session: Any, method: str, span: Span, labels_key: tuple[Any, ...]) -> None:
        self.session = session
        self.method = method
        self.span = span
        self.context = trace.set_span_in_context(span)
        self.labels_key = labels_key
        self.start = time.perf_counter()
        self.elapsed: float | None = None
        self.cls: Classification | None = None
        self.request_id: object = None
        """The id the request went out with (in process: the one the receiving side minted),
        written on the span with the outcome: one attribute batch, not two."""
        self.description: str | None = None
        """The span status description when it failed: the JSON-RPC error's or the exception's message."""
        self.awaiting_send = False
        """True while `ClientSession.call_tool` holds the span and its `send_request` has not taken it."""
        self.op: Operation | None = None
        self.fingerprint: str | None = None
        """The schema fingerprint of the tool as this session last listed it (tools/call only)."""
        self.unlisted: str | None = None
        """The tool name sent before the session listed it (tools/call only): see `spans._name_late`."""


_current: ContextVar[ClientCall | None] = ContextVar("mcpobs_client_call", default=None)


current = _current.get
"""The client request being sent in this context, if any (the contextvar's own `get`: no extra call)."""


def enter(call: ClientCall) -> tuple[object, object]:
    return _current.set(call), otel_context.attach(call.context)


def leave(tokens: tuple[Any, Any]) -> None:
    try:  # not `guarded`: this runs on every request, and a try costs nothing
        otel_context.detach(tokens[1])
        _current.reset(tokens[0])
    except Exception as exc:
        report("client context detach", exc)


def sending() -> ClientCall | None:
    """The mcpobs client request being written in this context, if its span is current.

    Contexts are copied into server handlers in process, so the contextvar alone could be a
    client call seen from inside the server; the current span tells them apart.
    """
    call = _current.get()
    return call if call is not None and trace.get_current_span() is call.span else None
