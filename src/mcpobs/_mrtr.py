"""Multi-round-trip requests (SEP-2322): which round of an exchange each request is.

A tool that needs the client's input answers `input_required`; the client retries with a
new request id, the answers, and the `requestState` it was given. Nothing on the wire
numbers the rounds, so the round travels inside the state itself: `RoundCounter` sits
just after the SDK's `RequestStateBoundary`, where the state is plaintext, and prefixes the
outgoing state with a marker (the round to come, and the span of the round that asked);
the boundary seals it, so the client can neither read nor forge it. On the retry the
boundary has verified and unsealed the state; the counter strips the marker before any
handler sees it, so the server's own state is exactly what it minted.

The request's span (opened by the middleware) gets `mcpobs.mrtr.round` on every round of
an exchange, `mcpobs.mrtr.input_methods` on pending rounds, and a link to the round before.
The state itself is never recorded: it is opaque and attacker-controlled.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from opentelemetry.trace import SpanContext, TraceFlags

from mcpobs import _state
from mcpobs import semconv as S
from mcpobs._guard import guarded, report
from mcpobs._patches import Patch

_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
_INPUT_METHODS = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})
_MARKER = re.compile(r"\Amcpobs-round:(\d{1,6}):([0-9a-f]{32}):([0-9a-f]{16});")
_MAX_ROUND = 999_999


class RoundCounter:
    """A server middleware placed right after `RequestStateBoundary`.

    It keeps stripping markers even after `uninstrument()` (then it only strips), so an
    exchange that started instrumented never hands a handler a state it did not mint.
    """

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if ctx.method not in _METHODS:
            return await call_next(ctx)
        previous: tuple[int, SpanContext | None] = (1, None)
        with guarded("mrtr round in"):
            previous, ctx = _strip(ctx)
        result = await call_next(ctx)
        try:
            return _mark(result, *previous)
        except Exception as exc:  # the result goes back unmarked: the next round counts as 1
            report("mrtr round out", exc)
            return result


def _strip(ctx: Any) -> tuple[tuple[int, SpanContext | None], Any]:
    params = ctx.params
    state = params.get("requestState") if params else None
    if not isinstance(state, str) or (match := _MARKER.match(state)) is None:
        return (1, None), ctx
    rest = state[match.end() :]
    params = {**params, "requestState": rest or None}  # a tool that sent no state gets none back
    link = SpanContext(int(match[2], 16), int(match[3], 16), is_remote=True, trace_flags=TraceFlags(1))
    return (int(match[1]), link), replace(ctx, params=params)


def _mark(result: Any, round_: int, previous: SpanContext | None) -> Any:
    from mcp_types.methods import is_input_required

    pending = is_input_required(result)
    state = _state.current()
    if state is None or (round_ == 1 and not pending):  # uninstrumented, or a plain one-round call
        return result
    span = state.span
    state.set_attribute(S.MRTR_ROUND, round_)
    if previous is not None and previous.is_valid:
        span.add_link(previous)
    if not pending:
        return result
    state.set_attribute(S.MRTR_INPUT_METHODS, _input_methods(result))
    ctx = span.get_span_context()
    marker = f"mcpobs-round:{min(round_ + 1, _MAX_ROUND)}:{ctx.trace_id:032x}:{ctx.span_id:016x};"
    if isinstance(result, Mapping):
        return {**result, "requestState": marker + (result.get("requestState") or "")}
    return result.model_copy(update={"request_state": marker + (result.request_state or "")})


def _input_methods(result: Any) -> list[str]:
    requests = result.get("inputRequests") if isinstance(result, Mapping) else result.input_requests
    methods = set()
    for request in (requests or {}).values():
        method = request.get("method") if isinstance(request, Mapping) else getattr(request, "method", None)
        methods.add(method if method in _INPUT_METHODS else S.OTHER)
    return sorted(methods)


def install(server: Any) -> None:
    """Put a `RoundCounter` right after the server's `RequestStateBoundary`, once."""
    from mcp.server.request_state import RequestStateBoundary

    chain = server.middleware
    if any(isinstance(m, RoundCounter) for m in chain):
        return
    for i, middleware in enumerate(chain):
        if isinstance(middleware, RequestStateBoundary):
            chain.insert(i + 1, RoundCounter())
            return
    # No boundary (a lowlevel Server without one): the state would travel in plaintext,
    # so rounds are not counted rather than exposing a forgeable marker.


def patches() -> list[Patch]:
    def mcpserver_init(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> None:
        wrapped(*args, **kwargs)
        with guarded("mrtr setup"):
            install(instance)

    return [Patch("mcp.server.mcpserver.server", "MCPServer.__init__", mcpserver_init)]
