"""Why a request was cancelled, when the peer said so.

The middleware sees a cancelled request as the cancellation exception raised out of its
chain; that is enough for the outcome. The peer's stated reason ("caller cancelled",
"timed out after 5.0s") arrives separately, in `notifications/cancelled`, which the
JSON-RPC dispatcher acts on in its read loop *before* the handler sees the exception.
One wrap there notes the reason against the request's dispatch context (in a table owned
here, nothing written onto the SDK's objects); the middleware reads it back when it
classifies the request as cancelled.

Streamable HTTP at 2026-07-28 and the in-memory direct dispatcher carry no reason (the
client aborts the POST or cancels its own scope), so the attribute is simply absent there.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

from mcpobs import semconv as S
from mcpobs._core import inventory as I
from mcpobs._core.guard import guarded
from mcpobs._core.patches import Patch
from mcpobs._core.text import clean
from mcpobs._server import state as _state

_reasons: dict[int, str] = {}
"""Reasons by `id()` of the SDK's per-request dispatch context; an entry leaves with its context.

(The context is an unhashable dataclass, so not a `WeakKeyDictionary` key; a finalizer
removes the entry when the context is collected, so an id is never read for another object.)
"""


def _note_reason(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """Wraps `JSONRPCDispatcher._dispatch_notification` (private; synchronous)."""
    with guarded("cancel reason"):
        msg = args[0] if args else kwargs.get("msg")
        if getattr(msg, "method", None) == "notifications/cancelled":
            _remember(instance, msg.params)
    return wrapped(*args, **kwargs)


def _remember(dispatcher: Any, params: Any) -> None:
    from mcp.shared.jsonrpc_dispatcher import cancelled_request_id_from_params, coerce_request_id

    held: Mapping[str, Any] = params or {}
    reason = held.get("reason")
    rid = cancelled_request_id_from_params(params)
    if not isinstance(reason, str) or rid is None:
        return
    in_flight = getattr(dispatcher, I.DISPATCHER_IN_FLIGHT.attribute).get(coerce_request_id(rid))
    if in_flight is not None:
        dctx = in_flight.dctx
        key = id(dctx)
        if key not in _reasons:
            weakref.finalize(dctx, _reasons.pop, key, None)
        _reasons[key] = clean(reason, S.MAX_REASON_LENGTH)


def reason(ctx: Any) -> str | None:
    """The peer's reason for cancelling this request, if it gave one (bounded)."""
    return _reasons.get(id(_state.dispatch_context(ctx.session))) if _reasons else None


def patches() -> list[Patch]:
    return [Patch.of(I.DISPATCH_NOTIFICATION, _note_reason)]
