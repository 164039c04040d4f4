"""Multi-round-trip requests (SEP-2322): which round of an exchange each request is.

A tool that needs the client's input answers `input_required`; the client retries with a
new request id, the answers, and the `requestState` it was given. Nothing on the wire
numbers the rounds, so the number travels inside the sealed state. The SDK's
`RequestStateBoundary` seals a claims envelope (expiry, binding, the server's plaintext
state) with the server's codec; mcpobs wraps that codec so the envelope also carries one
extra claim: the round to come, and the span of the round that asked. The codec
authenticates it, so the client can neither read nor forge it, and the boundary ignores
claims it does not know, so a replica without mcpobs (or after `uninstrument()`) reads the
same tokens unchanged. The server's own state is never touched.

The request's span (opened by the middleware) gets `mcpobs.mrtr.round` on every round of
an exchange, `mcpobs.mrtr.input_methods` on pending rounds (`note_pending`, called by the
middleware), and a link to the round before.
The state itself is never recorded: it is opaque and attacker-controlled.
"""

from __future__ import annotations

import copy
import json
import re
import weakref
from collections.abc import Mapping
from typing import Any, cast

from opentelemetry.trace import SpanContext, TraceFlags

from mcpobs._core import inventory as I
from mcpobs._core.guard import guarded
from mcpobs._core.methods import input_methods
from mcpobs._server import state as _state

_SECURITY = I.BOUNDARY_SECURITY.attribute
"""The boundary's security policy, which carries the codec (no public setter)."""

_CLAIM = "x-mcpobs-round"
"""The envelope claim: ``"{round}:{trace id}:{span id}"`` of the round that asked."""
_CLAIM_VALUE = re.compile(r"\A(\d{1,6}):([0-9a-f]{32}):([0-9a-f]{16})\Z")
_MAX_ROUND = 999_999


class RoundCodec:
    """Wraps a server's `RequestStateCodec`; adds and reads the round claim, nothing else.

    Outside a request mcpobs observes (not instrumented, or a token sealed elsewhere) it
    passes every payload through unchanged.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def seal(self, payload: bytes) -> str:
        with guarded("mrtr round seal"):
            payload = _with_round(payload)
        return self.inner.seal(payload)

    def unseal(self, token: str) -> bytes:
        payload = self.inner.unseal(token)
        with guarded("mrtr round unseal"):
            _read_round(payload)
        return payload


def _with_round(payload: bytes) -> bytes:
    state = _state.current()
    if state is None:
        return payload
    claims = json.loads(payload)
    served = state.round or 1
    ctx = state.span.get_span_context()
    claims[_CLAIM] = f"{min(served + 1, _MAX_ROUND)}:{ctx.trace_id:032x}:{ctx.span_id:016x}"
    return json.dumps(claims, separators=(",", ":")).encode()


def _read_round(payload: bytes) -> None:
    state = _state.current()
    if state is None:
        return
    value = json.loads(payload).get(_CLAIM)
    match = _CLAIM_VALUE.match(value) if isinstance(value, str) else None
    if match is None:  # sealed by a server without mcpobs: this retry starts the count
        return
    state.round = int(match[1])
    asked = SpanContext(int(match[2], 16), int(match[3], 16), is_remote=True, trace_flags=TraceFlags(1))
    if asked.is_valid and state.span.is_recording():
        state.span.add_link(asked)


def note_pending(state: _state.RequestState, result: Any) -> None:
    """A round that asks the client for input: its number (1 when it starts an exchange) and what it asks."""
    if state.round is None:
        state.round = 1
    state.input_methods = input_methods(
        cast("Mapping[str, Any]", result).get("inputRequests") if isinstance(result, Mapping) else result.input_requests
    )


def install(server: Any) -> Any:
    """Wrap the codec of the server's `RequestStateBoundary`, once.

    Returns the boundary when something changed (`uninstall(boundary)` undoes it), else None.
    """
    from mcp.server.request_state import RequestStateBoundary

    for middleware in server.middleware:
        if isinstance(middleware, RequestStateBoundary):
            own = getattr(middleware, _SECURITY)  # the SDK has no public setter
            if isinstance(own.codec, RoundCodec):
                return None
            security = copy.copy(own)  # private; the caller's policy object stays as it was
            security.codec = RoundCodec(own.codec)
            _own[middleware] = own
            setattr(middleware, _SECURITY, security)
            return middleware
    return None  # no boundary (a lowlevel Server without one): rounds are not counted


def uninstall(boundary: Any) -> None:
    """Give the boundary its own security policy (and codec) back.

    Tokens sealed with the round claim still unseal: the boundary ignores claims it does not know.
    """
    own = _own.pop(boundary, None)
    if own is not None and isinstance(getattr(getattr(boundary, _SECURITY), "codec", None), RoundCodec):
        setattr(boundary, _SECURITY, own)


_own: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
"""Boundary -> its own security policy, while mcpobs's copy (with the round codec) stands in."""
