"""The server's classification of a failed tool call, carried back to the client that asks for it.

At 2026-07-28 the SDK answers an unknown tool, bad arguments, a deliberate `ToolError` and a
crash alike with an `isError` result: the wire cannot tell them apart, the server's tool
hook can. The exchange, invisible to every host, framework and model on either side:

1. an instrumented client asks, in its tools/call request's `_meta`
   (`semconv.META_VERDICT_WANTED`: `semconv.VERDICT_VERSION`); a server without mcpobs sees
   one more `_meta` key, which is what `_meta` is for;
2. a server running mcpobs removes that key before its own code (middleware, handler, tool)
   sees the request (`asked`), and only when asked writes what it decided on a failed call
   under `semconv.META_VERDICT` (`stamp`; never with `send_verdict=False`);
3. the client takes the verdict out of the result (`take`) before its host sees it, so the
   host gets the result byte for byte as a server without mcpobs would have sent it.

Only bounded values travel: an `Outcome`, a `Boundary` and an error type from the registry's
own short list (never an exception's class or message), and the client accepts nothing
else, so a server cannot put a value of its choosing into the client's labels.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from mcpobs import semconv as S
from mcpobs._core.outcome import Classification
from mcpobs.semconv import Boundary, Outcome

SENT_ERROR_TYPES = frozenset({S.TOOL_ERROR, S.OUTPUT_VALIDATION})
"""The error types a verdict may carry; any other is left out (the client then keeps its own)."""
FAILED = frozenset({Outcome.TOOL_ERROR, Outcome.SERVER_ERROR, Outcome.CLIENT_ERROR})
"""The outcomes a verdict is sent for: a tools/call that did not succeed."""
_OUTCOMES = {o.value: o for o in FAILED}
_BOUNDARIES = {b.value: b for b in Boundary}
_EMPTY_META = "emptyMeta"
"""Set (true) when the result had a `_meta` of its own, empty: the client then leaves `{}`, not none."""

_payloads: dict[tuple[Classification, bool], dict[str, Any]] = {}
_NOTHING: Mapping[str, Any] = {}
_ABSENT = object()


def payload(cls: Classification, empty_meta: bool = False) -> dict[str, Any]:
    """What the server sends for `cls` (made once per classification)."""
    found = _payloads.get((cls, empty_meta))
    if found is not None:
        return found
    made: dict[str, Any] = {"outcome": cls.outcome.value}
    if cls.boundary is not None:
        made["boundary"] = cls.boundary.value
    if cls.error_type in SENT_ERROR_TYPES:
        made["errorType"] = cls.error_type
    if empty_meta:
        made[_EMPTY_META] = True
    if len(_payloads) < 64:
        _payloads[(cls, empty_meta)] = made
    return made


def asked(ctx: Any) -> bool:
    """Server side: whether a tools/call asks for the verdict. The key is removed from the request
    (`ctx.meta` and the raw params' `_meta`, which the handler and the tool's `Context` read), so
    the server's own code sees the request as the client's host sent it."""
    meta = ctx.meta
    if type(meta) is dict:  # built for this request by the SDK (`_extract_meta`): its own copy
        wanted = cast("dict[str, object]", meta).pop(S.META_VERDICT_WANTED, _ABSENT)
        if wanted is _ABSENT:
            return False
        if not meta:
            ctx.meta = None  # what a request without `_meta` has
    elif isinstance(meta, Mapping) and S.META_VERDICT_WANTED in meta:
        wanted = cast("Mapping[str, object]", meta)[S.META_VERDICT_WANTED]
    else:
        return False
    params = ctx.params
    raw = cast("dict[str, Any]", params).get("_meta") if type(params) is dict else None
    if type(raw) is dict and S.META_VERDICT_WANTED in raw:
        del raw[S.META_VERDICT_WANTED]
        if not raw:
            del cast("dict[str, Any]", params)["_meta"]
    return type(wanted) is int and wanted == S.VERDICT_VERSION


def stamp(result: Any, cls: Classification) -> Any:
    """`result` (a failed tools/call's) with the verdict in its `_meta`; a copy, the handler's own untouched.

    The wire dict of `MCPServer`'s chain, or a typed result (a framework's); anything else, or a
    `_meta` that is not an object, as it was.
    """
    if type(result) is dict:
        reply = cast("dict[str, Any]", result)
        meta: object = reply.get("_meta")
        if meta is not None and not isinstance(meta, Mapping):
            return reply
        held: Mapping[str, Any] = cast("Mapping[str, Any]", meta) if meta is not None else _NOTHING
        return {**reply, "_meta": {**held, S.META_VERDICT: payload(cls, meta is not None and not held)}}
    copy = getattr(result, "model_copy", None)
    if copy is not None and hasattr(result, "meta"):
        own: object = result.meta
        if own is not None and not isinstance(own, Mapping):
            return result
        kept: Mapping[str, Any] = cast("Mapping[str, Any]", own) if own is not None else _NOTHING
        return copy(update={"meta": {**kept, S.META_VERDICT: payload(cls, own is not None and not kept)}})
    return result


def take(result: Any) -> tuple[Classification | None, Any]:
    """Client side: the verdict in a failed tools/call result (None if none the client can use), and
    the result without it, as the server's SDK would have sent it without mcpobs: the other `_meta`
    keys in their order, or no `_meta` at all (unset, as a result parsed without one) when the
    verdict was all it held."""
    meta = getattr(result, "meta", None)
    if not isinstance(meta, Mapping) or S.META_VERDICT not in meta:
        return None, result
    held = cast("Mapping[str, object]", meta)
    sent = held[S.META_VERDICT]
    found = _classification(sent)
    copy = getattr(result, "model_copy", None)
    if copy is None:
        return found, result
    rest: dict[str, object] = {k: v for k, v in held.items() if k != S.META_VERDICT}
    empty_meta = isinstance(sent, Mapping) and cast("Mapping[str, object]", sent).get(_EMPTY_META) is True
    if rest or empty_meta:
        return found, copy(update={"meta": rest})
    bare = copy(update={"meta": None})
    fields_set = getattr(bare, "__pydantic_fields_set__", None)
    if isinstance(fields_set, set):
        cast("set[str]", fields_set).discard("meta")
    return found, bare


_read: dict[tuple[object, object, object], Classification | None] = {}


def _classification(sent: object) -> Classification | None:
    """The verdict a server sent, if the client can use it.

    The error type stays the wire's `tool_error` unless the verdict names one of
    `SENT_ERROR_TYPES`: the client was answered with an `isError` result either way.
    """
    if not isinstance(sent, Mapping):
        return None
    verdict = cast("Mapping[str, object]", sent)
    key = (verdict.get("outcome"), verdict.get("boundary"), verdict.get("errorType"))
    try:
        return _read[key]
    except (KeyError, TypeError):  # not seen yet, or an unhashable value (refused below)
        pass
    outcome = _OUTCOMES.get(key[0]) if isinstance(key[0], str) else None
    boundary = _BOUNDARIES.get(key[1]) if isinstance(key[1], str) else None
    if outcome is None or (key[1] is not None and boundary is None):
        found = None
    else:
        error_type = key[2] if isinstance(key[2], str) and key[2] in SENT_ERROR_TYPES else S.TOOL_ERROR
        found = Classification(outcome, boundary, error_type)
    try:
        if len(_read) < 256:
            _read[key] = found
    except TypeError:
        pass
    return found
