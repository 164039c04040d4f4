"""A batch of attributes onto a span: what `Span.set_attributes` does, for less.

The SDK's `set_attributes` validates every value (`_clean_attribute_value`, a Python call per
value) and the batch as a mapping: about 5,600 instructions per attribute and 16,000 per batch
(callgrind, opentelemetry-sdk 1.45), most of what a span's end batch costs. mcpobs's values
are already what the SDK would keep (a `str`, `int`, `float` or `bool`), so when nothing in the
batch would be changed or dropped, writing it into the span's attribute dict is what the SDK
would do (`BoundedAttributes._set_items`: a key already there moves to the end, nothing is
dropped), under the same two locks.

That holds only for the SDK's own `Span` holding the SDK's own `BoundedAttributes`, and only
if those still work as they did when mcpobs was written: the first write proves it (`_proof`,
one scratch span written both ways); if it differs, or a private name moved, every batch goes
through `set_attributes`. So does a batch that the span's limits would cut (a string past the
length limit, more attributes than the count limit keeps), a value of another type, a span
that ended, any other span.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from opentelemetry.trace import Span

from mcpobs._core.guard import report

_VALUES = frozenset({str, int, float, bool})
"""Value types the SDK keeps as they are (a `str` when the length limit does not cut it); exact types."""
_KEYS = frozenset({str})

_span_class: type | None = None
"""The SDK's recording span class, once the proof passed (None: every batch takes `set_attributes`)."""
_bounded_class: type | None = None
_proved = False


def set_attributes(span: Span, attributes: Mapping[str, Any]) -> None:
    """`span.set_attributes(attributes)`, by the direct write when that is provably the same."""
    if not _proved:
        _prove()
    if type(span) is not _span_class or not _write(span, attributes):
        span.set_attributes(attributes)


def _write(span: Any, attributes: Mapping[str, Any]) -> bool:
    """Write into the span's dict as `BoundedAttributes._set_items` would; False when that is not certain."""
    bounded = span._attributes
    if type(bounded) is not _bounded_class:
        return False
    stored: dict[str, Any] = bounded._dict
    room = bounded.maxlen
    if room is not None and len(stored) + len(attributes) > room:
        return False  # the SDK would evict the oldest (counted as dropped)
    if "" in attributes or not _KEYS.issuperset(map(type, attributes)):
        return False  # the SDK drops an empty key, converts one that is not a string
    limit = bounded.max_value_len
    if limit is None:  # the default: any string is kept whole
        if not _VALUES.issuperset(map(type, attributes.values())):
            return False  # the SDK copies a sequence into a tuple, converts anything else
    else:
        for value in attributes.values():
            kind: type[object] = type(cast("object", value))
            if kind not in _VALUES or (kind is str and len(value) > limit):
                return False  # the SDK converts it, or cuts it (and warns)
    with span._lock, bounded._lock:
        if span._end_time is not None or bounded._immutable:
            return False  # ended meanwhile: `set_attributes` warns as it does for any late write
        if not stored.keys().isdisjoint(attributes):
            for key in attributes:
                stored.pop(key, None)  # re-set, it moves to the end, as `_setitem_locked` moves it
        stored.update(attributes)
    return True


def _prove() -> None:
    """Write one batch onto two scratch spans, one each way; use the direct write only if they agree.

    The scratch spans are built as the SDK's tracer builds its spans, without a tracer: no
    processor, no limits, nothing recorded or exported.
    """
    global _span_class, _bounded_class, _proved
    _proved = True
    try:
        from opentelemetry.attributes import BoundedAttributes
        from opentelemetry.sdk import trace as sdk_trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.trace import SpanContext

        span_class: Any = getattr(sdk_trace, "_Span", None)  # what `Tracer.start_span` builds
        if span_class is None:
            return
        context = SpanContext(trace_id=1, span_id=1, is_remote=False)
        start = {"a": "1", "b": 2}
        batch = {"a": "moved", "c": "x", "d": True, "e": 1.5, "f": 7}
        theirs = span_class("proof", context, resource=Resource.get_empty(), attributes=start)
        ours = span_class("proof", context, resource=Resource.get_empty(), attributes=start)
        theirs.set_attributes(batch)
        _span_class, _bounded_class = span_class, BoundedAttributes
        same = (
            _write(ours, batch)
            and list(ours.attributes.items()) == list(theirs.attributes.items())
            and ours._attributes.dropped == theirs._attributes.dropped
        )
        if not same:
            _span_class = _bounded_class = None
    except Exception as exc:
        _span_class = _bounded_class = None
        report("attribute write check", exc)
