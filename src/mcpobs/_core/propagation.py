"""W3C trace context in a request's `_meta`, read defensively.

`_meta` is caller-controlled: a malformed or hostile carrier yields no parent (the span
then nests under whatever is current), never an exception.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from opentelemetry import propagate
from opentelemetry.context import Context
from opentelemetry.propagators.textmap import Getter
from opentelemetry.trace import get_current_span

BAGGAGE = "baggage"
"""The W3C baggage key: the host's own key-value pairs (user ids, emails, tenants), not trace context."""
_TRACE_KEYS = ("traceparent", "tracestate", BAGGAGE)


class _MetaGetter(Getter[Mapping[str, Any]]):
    def get(self, carrier: Mapping[str, Any], key: str) -> list[str] | None:
        value = carrier.get(key)
        return [value] if isinstance(value, str) else None

    def keys(self, carrier: Mapping[str, Any]) -> list[str]:
        return [k for k in _TRACE_KEYS if k in carrier]


_getter = _MetaGetter()


def extract(meta: object) -> Context | None:
    """The context a request's `_meta` carries, or None when it carries no valid one."""
    if meta is None or not isinstance(meta, (dict, Mapping)) or "traceparent" not in meta:
        return None  # `dict` first: a dict is told apart before the (slower) abstract-class check
    try:
        ctx = propagate.extract(cast("Mapping[str, Any]", meta), getter=_getter)
    except Exception:
        return None
    return ctx if get_current_span(ctx).get_span_context().is_valid else None


def inject(meta: dict[str, Any], context: Context | None = None, baggage: bool = False) -> None:
    """Write the current (or given) trace context into a `_meta` dict (or HTTP headers).

    `baggage`: the host's W3C baggage goes too (`send_baggage=True`); by default it stays in the
    process: a server is often someone else's. A `baggage` entry already there is the caller's own.
    """
    had = BAGGAGE in meta
    propagate.inject(meta, context=context)
    if not baggage and not had:
        meta.pop(BAGGAGE, None)


def without_baggage(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """Wraps the SDK's `inject_trace_context(meta)`: the host's baggage is not sent (`send_baggage=False`)."""
    meta: object = args[0] if args else kwargs.get("meta")
    carrier = cast("dict[str, Any]", meta) if type(meta) is dict else None
    had = carrier is not None and BAGGAGE in carrier
    result = wrapped(*args, **kwargs)
    if carrier is not None and not had:
        carrier.pop(BAGGAGE, None)
    return result
