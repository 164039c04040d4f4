"""The server's classification of a failed tool call, carried back to the client in `_meta`.

At 2026-07-28 the SDK answers an unknown tool, bad arguments, a deliberate `ToolError` and a
crash alike with an `isError` result: the wire cannot tell them apart, the server's tool
hook can. A server running mcpobs writes what it decided under `semconv.META_VERDICT`
(`stamp`), and an instrumented client takes it instead of the wire's `tool_error` (`read`).

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

_payloads: dict[Classification, dict[str, str]] = {}


def payload(cls: Classification) -> dict[str, str]:
    """What the server sends for `cls` (made once per classification)."""
    found = _payloads.get(cls)
    if found is None:
        found = {"outcome": cls.outcome.value}
        if cls.boundary is not None:
            found["boundary"] = cls.boundary.value
        if cls.error_type in SENT_ERROR_TYPES:
            found["errorType"] = cls.error_type
        if len(_payloads) < 64:
            _payloads[cls] = found
    return found


def stamp(result: Any, cls: Classification) -> Any:
    """`result` (a failed tools/call's) with the verdict in its `_meta`; a copy, the handler's own untouched.

    The wire dict of `MCPServer`'s chain, or a typed result (a framework's); anything else as it was.
    """
    verdict = payload(cls)
    if type(result) is dict:
        reply = cast("dict[str, Any]", result)
        meta = reply.get("_meta")
        held: Mapping[str, Any] = cast("Mapping[str, Any]", meta) if isinstance(meta, Mapping) else {}
        return {**reply, "_meta": {**held, S.META_VERDICT: verdict}}
    copy = getattr(result, "model_copy", None)
    if copy is not None and hasattr(result, "meta"):
        own: object = result.meta
        kept: Mapping[str, Any] = cast("Mapping[str, Any]", own) if isinstance(own, Mapping) else {}
        return copy(update={"meta": {**kept, S.META_VERDICT: verdict}})
    return result


_read: dict[tuple[object, object, object], Classification | None] = {}


def read(result: Any) -> Classification | None:
    """The server's verdict on a failed tools/call result, if it sent one the client can use.

    The error type stays the wire's `tool_error` unless the verdict names one of
    `SENT_ERROR_TYPES`: the client was answered with an `isError` result either way.
    """
    meta = getattr(result, "meta", None)
    if not isinstance(meta, Mapping):
        return None
    sent = cast("Mapping[str, object]", meta).get(S.META_VERDICT)
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
