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
an exchange, `mcpobs.mrtr.input_methods` on pending rounds, and a link to the round before.
The state itself is never recorded: it is opaque and attacker-controlled.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any

from mcp_types.methods import is_input_required
from opentelemetry.trace import SpanContext, TraceFlags

from mcpobs._core.guard import guarded
from mcpobs._core.methods import ROUND_METHODS, input_methods
from mcpobs._server import state as _state

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


class PendingRounds:
    """A server middleware (just after the boundary) that labels rounds asking for input."""

    def __init__(self, boundary: Any, security: Any) -> None:
        self.boundary = boundary
        self.security = security
        """The boundary's own security policy, given back by `uninstall`."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        # Most results ask for nothing: one type test, and no guard or state lookup, decides that.
        if ctx.method in ROUND_METHODS and is_input_required(result):
            with guarded("mrtr pending round"):
                _note_pending(result)
        return result


def _note_pending(result: Any) -> None:
    state = _state.current()
    if state is None:
        return
    if state.round is None:
        state.round = 1  # the first request of an exchange
    state.input_methods = _input_methods(result)


def _input_methods(result: Any) -> list[str]:
    return input_methods(result.get("inputRequests") if isinstance(result, Mapping) else result.input_requests)


def install(server: Any) -> bool:
    """Wrap the codec of the server's `RequestStateBoundary` and label pending rounds, once.

    True when something changed (then `uninstall` undoes it).
    """
    from mcp.server.request_state import RequestStateBoundary

    chain = server.middleware
    if any(isinstance(m, PendingRounds) for m in chain):
        return False
    for i, middleware in enumerate(chain):
        if isinstance(middleware, RequestStateBoundary):
            own = middleware._security  # pyright: ignore[reportPrivateUsage]  # the SDK has no public setter
            security = copy.copy(own)  # private; the caller's policy object stays as it was
            if not isinstance(security.codec, RoundCodec):
                security.codec = RoundCodec(security.codec)
            middleware._security = security  # pyright: ignore[reportPrivateUsage]
            chain.insert(i + 1, PendingRounds(middleware, own))
            return True
    return False  # no boundary (a lowlevel Server without one): rounds are not counted


def uninstall(server: Any) -> None:
    """Give the boundary its own codec back and take `PendingRounds` out of the chain.

    Tokens sealed with the round claim still unseal: the boundary ignores claims it does not know.
    """
    chain = server.middleware
    for i, middleware in enumerate(chain):
        if isinstance(middleware, PendingRounds):
            if isinstance(getattr(middleware.boundary._security, "codec", None), RoundCodec):
                middleware.boundary._security = middleware.security
            del chain[i]
            return
