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
        variable = runtime._current_context
        if not isinstance(variable, ContextVar) or variable.get() is not otel_context.get_current():
            return None
        return variable  # pyright: ignore[reportUnknownVariableType]
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

        key = propagation._SPAN_KEY  # pyright: ignore[reportPrivateUsage]
        return key if isinstance(key, str) else None
    except Exception:
        return None


_SPAN_KEY = _span_key()


def _current_span() -> Span:
    return get_current().get(_SPAN_KEY, INVALID_SPAN)  # type: ignore[arg-type,return-value]


def _proved() -> bool:
    """The direct read answers as `trace.get_current_span()`, outside a span and inside one."""
    if _SPAN_KEY is None or _var is None:
        return False
    try:
        outside = _current_span() is trace.get_current_span()
        probe = NonRecordingSpan(SpanContext(trace_id=1, span_id=1, is_remote=False))
        token = otel_context.attach(trace.set_span_in_context(probe))
        try:
            inside = _current_span() is trace.get_current_span() is probe
        finally:
            otel_context.detach(token)
        return outside and inside
    except Exception:
        return False


get_current_span: Callable[[], Span] = _current_span if _proved() else trace.get_current_span
"""`opentelemetry.trace.get_current_span()` (of the current context)."""
