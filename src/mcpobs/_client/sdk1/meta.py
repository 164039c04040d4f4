"""mcp 1.x: the trace context in a request's (or notification's) `_meta`, on a copy the SDK sends.

mcp 1.x has no trace-context handling of its own: `BaseSession.send_request` writes
`request.model_dump(by_alias=True, exclude_none=True)` to the wire as it is. So the request is
handed to the SDK as a shallow copy whose `params._meta` also carries `traceparent` and
`tracestate` (and the host's `baggage` only with `send_baggage=True`); the host's own object is
never changed. A request sent without params (`tools/list`, `ping`, `notifications/initialized`)
gets the params model its type declares, with nothing in it but `_meta`.

The trace keys are ours: the span current when the SDK writes the request is the call's, so
`traceparent` names it even when the host (or `fastmcp.Client`, which injects its caller's
context) put one there first. Every other key the caller set stays as it was, a `baggage` of its
own included.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast, get_args

from opentelemetry.context import Context

from mcpobs._core import propagation as _propagation

_TRACE_KEYS = ("traceparent", "tracestate")
_declared: dict[tuple[Any, str], Any] = {}


def _declared_model(owner: Any, field: str) -> Any:
    """The model class `owner` declares for `field` (`params: PaginatedRequestParams | None`), or None."""
    key = (owner, field)
    try:
        return _declared[key]
    except KeyError:
        pass
    found = None
    info = getattr(owner, "model_fields", {}).get(field)
    annotation = getattr(info, "annotation", None)
    for candidate in (annotation, *get_args(annotation)):
        if isinstance(candidate, type) and hasattr(candidate, "model_fields"):
            found = candidate
            break
    if len(_declared) < 256:
        _declared[key] = found
    return found


def carrier(context: Context, baggage: bool) -> dict[str, str]:
    """The trace context of `context` as `_meta` entries (empty when it holds no valid span)."""
    found: dict[str, str] = {}
    _propagation.inject(found, context=context, baggage=baggage)
    return found


def _merged(held: Mapping[str, Any], trace: Mapping[str, str]) -> dict[str, Any]:
    merged = {k: v for k, v in held.items() if k not in _TRACE_KEYS}
    for key, value in trace.items():
        if key == _propagation.BAGGAGE and key in held:
            continue  # the caller's own baggage
        merged[key] = value
    return merged


def stamped(message: Any, trace: Mapping[str, str]) -> Any:
    """`message` (a `ClientRequest`/`ClientNotification`, or a bare request model) with `trace` in
    its `_meta`: a copy, or `message` itself when there is nothing to add or it is not a model."""
    if not trace:
        return message
    root: Any = getattr(message, "root", message)
    if not hasattr(root, "model_copy"):
        return message
    params: Any = getattr(root, "params", None)
    new_params: Any
    if isinstance(params, Mapping):  # a request built with plain-dict params
        plain = cast("Mapping[str, Any]", params)
        given: Any = plain.get("_meta")
        own: Mapping[str, Any] = cast("Mapping[str, Any]", given) if isinstance(given, Mapping) else {}
        new_params = {**plain, "_meta": _merged(own, trace)}
    else:
        if params is None:
            declared = _declared_model(type(root), "params")
            if declared is None:
                return message
            params = declared()
        meta_model = _declared_model(type(params), "meta")
        if meta_model is None:
            return message
        held_meta: Any = getattr(params, "meta", None)
        held: dict[str, Any] = {} if held_meta is None else held_meta.model_dump(by_alias=True, exclude_none=True)
        new_params = params.model_copy(update={"meta": meta_model(**_merged(held, trace))})
    new_root = root.model_copy(update={"params": new_params})
    return new_root if root is message else message.model_copy(update={"root": new_root})


def trace_of(params: object, baggage: bool) -> dict[str, str]:
    """The trace keys a JSON-RPC message's params (a dict) carry in `_meta`, for its HTTP headers
    (`baggage`: the baggage too, with `send_baggage=True`)."""
    meta = cast("Mapping[str, object]", params).get("_meta") if isinstance(params, Mapping) else None
    if not isinstance(meta, Mapping):
        return {}
    held = cast("Mapping[str, object]", meta)
    keys = (*_TRACE_KEYS, _propagation.BAGGAGE) if baggage else _TRACE_KEYS
    return {k: v for k in keys if isinstance(v := held.get(k), str)}
