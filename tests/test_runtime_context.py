"""mcpobs's direct reads and writes of the OpenTelemetry context answer as OpenTelemetry's own."""

from __future__ import annotations

from opentelemetry import context, trace
from opentelemetry.sdk.trace import TracerProvider

from mcpobs._core import runtime_context


def test_the_default_runtime_context_is_read_straight():
    assert runtime_context.get_current is not context.get_current  # the fast path is in use
    assert runtime_context.get_current() is context.get_current()


def test_a_span_made_current_reads_back_the_same_both_ways():
    span = TracerProvider().get_tracer("t").start_span("s")
    made = runtime_context.in_span(span)
    assert made == trace.set_span_in_context(span) and type(made) is type(trace.set_span_in_context(span))
    token = runtime_context.attach(made)
    try:
        assert runtime_context.get_current_span() is trace.get_current_span() is span
    finally:
        runtime_context.detach(token)
    assert runtime_context.get_current_span() is trace.get_current_span() is trace.INVALID_SPAN


def test_a_token_that_does_not_reset_goes_to_opentelemetry_which_logs_it(caplog):
    token = runtime_context.attach(context.get_current())
    runtime_context.detach(token)
    runtime_context.detach(token)  # used twice: the variable refuses it, OpenTelemetry logs it
    assert "Failed to detach context" in caplog.text
