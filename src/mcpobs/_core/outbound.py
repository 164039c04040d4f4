"""The client request being sent in this context: the one thing the server side reads of a client's.

In process (no JSON-RPC) the receiving side mints the request id, and the client call waiting on
it records that id with its outcome. The client side owns the call (`_client/calls.py`); this
module owns only the contextvar the call lives in and the rule that tells a call being sent from
one seen from inside a handler, so the server side depends on `_core` alone.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Protocol

from opentelemetry.trace import Span

from mcpobs._core.runtime_context import get_current_span


class Outbound(Protocol):
    """What the server side may touch of a client call: its span, and the id it went out with."""

    span: Span
    request_id: object


current_call: ContextVar[Any] = ContextVar("mcpobs_client_call", default=None)
"""The client call being sent in this context (`_client/calls.py` sets it and types it)."""


def sending() -> Outbound | None:
    """The mcpobs client request being written in this context, if its span is current.

    Contexts are copied into server handlers in process, so the contextvar alone could be a
    client call seen from inside the server; the current span tells them apart.
    """
    call: Outbound | None = current_call.get()
    return call if call is not None and get_current_span() is call.span else None
