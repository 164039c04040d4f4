"""A caller's trace context at the server's boundary: data, not an instruction.

A `traceparent` (in `_meta`, or the HTTP header) is written by whoever calls the server. Taken
as an instruction, its sampled flag would let a caller hide its calls from the server's own
traces (`-00`: no span, so no failure reaches a tail sampler), and its `tracestate` would be
exported as sent, text no `redact` saw (W3C Trace Context's security and privacy
considerations; OpenTelemetry's advice not to accept propagated values from outside a trust
boundary as they come). `instrument(caller_context=...)` says what it is:

- `join` (the default): the server's span joins the caller's trace (same trace id, the
  caller's span its parent), but whether it is recorded is what the server's sampler decides
  for a call that starts here; the `tracestate` and baggage are dropped;
- `trust` (a mesh whose callers are yours): the context as sent, sampled flag included; each
  `tracestate` value passes `redact`;
- `link`: a new trace, linked to the caller's span.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import baggage, trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased
from opentelemetry.trace import Link, NonRecordingSpan, SpanContext, SpanKind, TraceFlags, TraceState

from mcpobs._core.guard import report
from mcpobs._core.telemetry import Telemetry

_EMPTY = Context()
"""A context with no span in it: a sampler asked about it decides as for a root."""
_NO_STATE = TraceState()
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_UNSAMPLED = TraceFlags(TraceFlags.DEFAULT)


def accepted(
    caller: Context | None, telemetry: Telemetry, name: str, attributes: Any
) -> tuple[Context | None, Link | None]:
    """The parent for the server's span of a request carrying `caller` (extracted, or None), and
    the link to the caller's span when the span starts a new trace (`link`)."""
    if caller is None:
        return None, None
    span_context = trace.get_current_span(caller).get_span_context()
    mode = telemetry.settings.caller_context
    if mode == "trust":
        state = _redacted(span_context.trace_state, telemetry)
        if state is span_context.trace_state:
            return caller, None
        return trace.set_span_in_context(NonRecordingSpan(_copy(span_context, span_context.trace_flags, state))), None
    if mode == "link":
        return _EMPTY, Link(_copy(span_context, span_context.trace_flags))
    sampler = _sampler(telemetry)
    # The common case (the SDK's default sampler, an instrumented caller): the caller's context
    # already says what the server would decide; only its baggage must not go on.
    if span_context.trace_flags.sampled and not span_context.trace_state and _always(sampler):  # noqa: SIM102
        if not baggage.get_all(caller):
            return caller, None
    sampled = _root_sampled(sampler, span_context.trace_id, name, attributes)
    return trace.set_span_in_context(NonRecordingSpan(_copy(span_context, _SAMPLED if sampled else _UNSAMPLED))), None


def _copy(span_context: SpanContext, flags: TraceFlags, state: TraceState | None = None) -> SpanContext:
    """The caller's span as a remote parent or link: its ids, `flags`, and no `tracestate` unless given."""
    return SpanContext(span_context.trace_id, span_context.span_id, True, flags, state or _NO_STATE)


def _sampler(telemetry: Telemetry) -> Any:
    """The sampler of the tracer provider the server records to, or None (no SDK, a vendor's)."""
    tracer: Any = telemetry.tracer
    if isinstance(tracer, trace.ProxyTracer):
        tracer = getattr(tracer, "_tracer", tracer)  # the provider's, once one is set
    return getattr(tracer, "sampler", None)


def _always(sampler: Any) -> bool:
    """The sampler records every root and every sampled remote parent: the SDK's default
    (`parentbased_always_on`) or `always_on`. Read from the SDK's own attributes; a sampler
    without them is asked each time."""
    if sampler is ALWAYS_ON:
        return True
    return (
        isinstance(sampler, ParentBased)
        and getattr(sampler, "_root", None) is ALWAYS_ON
        and getattr(sampler, "_remote_parent_sampled", None) is ALWAYS_ON
    )


def _root_sampled(sampler: Any, trace_id: int, name: str, attributes: Any) -> bool:
    """What the server's sampler decides for this call as if it started here (a ParentBased
    sampler asks its root sampler; a ratio sampler reads the trace id, as it would anyway).

    A tracer without a sampler (none configured, a vendor's) records: the call is the server's.
    """
    should_sample = getattr(sampler, "should_sample", None)
    if should_sample is None:
        return True
    try:
        return bool(should_sample(_EMPTY, trace_id, name, SpanKind.SERVER, attributes).decision.is_sampled())
    except Exception as exc:
        report("server sampling decision (the tracer provider's sampler raised)", exc)
        return True


def _redacted(state: TraceState, telemetry: Telemetry) -> TraceState:
    """A trusted caller's `tracestate`, each value as `redact` leaves it (a member it drops, or
    answers with what `tracestate` cannot hold, is left out); as it is without a `redact`."""
    if not state or telemetry.settings.redact is None:
        return state
    kept: list[tuple[str, str]] = []
    for key, value in state.items():
        found = telemetry.privacy.text(value)
        if found:
            kept.append((key, found))
    return TraceState(kept)  # validates each member: one `redact` made invalid is dropped (and logged by the SDK)
