"""The OpenTelemetry context, read and set straight on its `ContextVar` when that is provably the same.

`context.get_current()`, `attach` and `detach` each pass two Python layers (the module's
function, then the runtime context's method) before they reach the one `ContextVar` the
default runtime context keeps; every mcpobs call does several of them. With the default
runtime context (`contextvars_context`), the variable's own C methods do the same thing. Any
other runtime context (`OTEL_PYTHON_CONTEXT`), or a private name that moved, keeps
OpenTelemetry's own functions.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import INVALID_SPAN, NonRecordingSpan, Span, SpanContext


def _variable() -> ContextVar[Context] | None:
    """The default runtime context's variable, if the runtime context is the default one."""
    try:
        from opentelemetry.context.contextvars_context import ContextVarsRuntimeContext

        runtime: Any = otel_context._RUNTIME_CONTEXT  # pyright: ignore[reportPrivateUsage]
        if type(runtime) is not ContextVarsRuntimeContext:
            return None
        variable: ContextVar[Context] = runtime._current_context  # pyright: ignore[reportPrivateUsage]
        if variable.get() is not otel_context.get_current():
            return None
        return variable
    except Exception:
        return None


_var = _variable()

get_current: Callable[[], Context] = _var.get if _var is not None else otel_context.get_current
"""`opentelemetry.context.get_current`."""

attach: Callable[[Context], object] = _var.set if _var is not None else otel_context.attach  # type: ignore[assignment]
"""`opentelemetry.context.attach`."""


def detach(token: Any) -> None:
    """`opentelemetry.context.detach`: a token that does not reset goes to OpenTelemetry's, which logs it."""
    if _var is not None:
        try:
            _var.reset(token)
            return
        except Exception:  # OpenTelemetry's own detach reports it, as before
            pass
    otel_context.detach(token)


def _span_key() -> str | None:
    try:
        from opentelemetry.trace import propagation

        return propagation._SPAN_KEY  # pyright: ignore[reportPrivateUsage]
    except Exception:
        return None


_SPAN_KEY = _span_key()


def _current_span() -> Span:
    return get_current().get(_SPAN_KEY, INVALID_SPAN)  # type: ignore[arg-type,return-value]


def _in_span(span: Span) -> Context:
    values = get_current().copy()
    values[_SPAN_KEY] = span  # type: ignore[index]
    return Context(values)


def _proved() -> bool:
    """The direct read and write answer as `trace.get_current_span()` and `trace.set_span_in_context`,
    outside a span and inside one."""
    if _SPAN_KEY is None or _var is None:
        return False
    try:
        outside = _current_span() is trace.get_current_span()
        probe = NonRecordingSpan(SpanContext(trace_id=1, span_id=1, is_remote=False))
        theirs = trace.set_span_in_context(probe)
        ours = _in_span(probe)
        written = type(ours) is type(theirs) and ours == theirs
        token = otel_context.attach(theirs)
        try:
            inside = _current_span() is trace.get_current_span() is probe
            nested = _in_span(probe) == trace.set_span_in_context(probe)
        finally:
            otel_context.detach(token)
        return outside and inside and written and nested
    except Exception:
        return False


_PROVED = _proved()

get_current_span: Callable[[], Span] = _current_span if _PROVED else trace.get_current_span
"""`opentelemetry.trace.get_current_span()` (of the current context)."""

in_span: Callable[[Span], Context] = _in_span if _PROVED else trace.set_span_in_context
"""`opentelemetry.trace.set_span_in_context(span)`: the current context with `span` as its span."""
