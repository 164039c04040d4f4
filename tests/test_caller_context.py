"""A caller's trace context is data at the server's boundary: its sampled flag does not hide the
server's span, its `tracestate` is not exported around `redact` (docs/configuration.md#a-callers-trace-context).

Over loopback HTTP, with the context in the `traceparent` header and in `_meta`, on a stateless
(2026-07-28) call and on a request the transport refuses."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
import pytest
from opentelemetry import baggage
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased
from opentelemetry.trace import SpanKind
from shop import create_server
from test_http_boundary import CALL_HEADERS, call, settle
from transports import serve_http

import mcpobs
from mcpobs import ConfigurationError
from mcpobs import semconv as S
from mcpobs._core.config import settings_from
from mcpobs.testing import CapturedTelemetry, capture

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN_ID = "00f067aa0ba902b7"
UNSAMPLED = f"00-{TRACE_ID}-{SPAN_ID}-00"
CARD = "4111111111111111"
TRACESTATE = f"vendor=card-{CARD},other=ok"


@contextmanager
def instrumented(**options: Any) -> Iterator[CapturedTelemetry]:
    telemetry = capture(**options)
    try:
        yield telemetry
    finally:
        mcpobs.uninstrument()


def post(base: str, carrier: str, extra: dict[str, str], body: Any = None) -> httpx2.Response:
    """A stateless tools/call carrying `extra` (traceparent, tracestate, baggage) as headers or in `_meta`."""
    from test_http_boundary import ENVELOPE

    headers = dict(CALL_HEADERS)
    if body is None:
        body = call(meta={**ENVELOPE, **extra}) if carrier == "meta" else call()
    if carrier == "header":
        headers.update(extra)
    with httpx2.Client(timeout=10) as http:
        return http.post(base + "/mcp", headers=headers, content=json.dumps(body).encode())


def served(telemetry: CapturedTelemetry, carrier: str, extra: dict[str, str]) -> list[Any]:
    with serve_http(create_server().streamable_http_app()) as base:
        assert post(base, carrier, extra).status_code == 200
        settle(telemetry, 1)
    return [s for s in telemetry.spans() if s.kind is SpanKind.SERVER]


@pytest.mark.parametrize("carrier", ["header", "meta"])
def test_a_callers_unsampled_traceparent_still_gives_the_server_its_span(carrier):
    with instrumented() as telemetry:
        (span,) = served(telemetry, carrier, {"traceparent": UNSAMPLED})
    assert span.name == "tools/call get_order_status"
    assert span.context.trace_flags.sampled
    assert f"{span.context.trace_id:032x}" == TRACE_ID  # the caller's trace goes on through the server
    assert span.parent is not None and f"{span.parent.span_id:016x}" == SPAN_ID


@pytest.mark.parametrize("carrier", ["header", "meta"])
def test_a_trusted_mesh_has_the_callers_decision_honoured(carrier):
    with instrumented(caller_context="trust") as telemetry:
        assert served(telemetry, carrier, {"traceparent": UNSAMPLED}) == []
        assert telemetry.total(S.SERVER_REQUESTS.name) == 1  # the metrics still count the call
        (sampled,) = served(telemetry, carrier, {"traceparent": UNSAMPLED[:-2] + "01"})
    assert f"{sampled.context.trace_id:032x}" == TRACE_ID


@pytest.mark.parametrize("carrier", ["header", "meta"])
def test_link_starts_a_new_trace_linked_to_the_callers_span(carrier):
    with instrumented(caller_context="link") as telemetry:
        (span,) = served(telemetry, carrier, {"traceparent": UNSAMPLED, "tracestate": TRACESTATE})
    assert span.parent is None and f"{span.context.trace_id:032x}" != TRACE_ID
    (link,) = span.links
    assert f"{link.context.trace_id:032x}" == TRACE_ID and f"{link.context.span_id:016x}" == SPAN_ID
    assert not link.context.trace_state  # the caller's text does not ride on the link either


def test_the_servers_ratio_sampler_decides_a_joined_call_not_the_caller():
    """With `parentbased_traceidratio`, a caller's `-01` does not force recording, nor `-00` hide a call:
    the ratio decides on the trace id, as for a call that starts at the server."""
    provider = TracerProvider(sampler=ParentBased(TraceIdRatioBased(0.5)))
    captured = CapturedTelemetry()
    provider.add_span_processor(SimpleSpanProcessor(captured.exporter))
    mcpobs.uninstrument()
    mcpobs.instrument(tracer_provider=provider, meter_provider=captured.meter_provider)
    # The ratio reads the trace id's low 64 bits: at 0.5 the low one is kept, the high one not.
    low, high = "1" * 16 + "00000000000000ff", "1" * 16 + "ffffffffffffff00"
    try:
        with serve_http(create_server().streamable_http_app()) as base:
            for trace_id, flag in ((low, "00"), (high, "01")):
                assert post(base, "header", {"traceparent": f"00-{trace_id}-{SPAN_ID}-{flag}"}).status_code == 200
            settle(captured, 1)
    finally:
        mcpobs.uninstrument()
    kept = [f"{s.context.trace_id:032x}" for s in captured.spans() if s.kind is SpanKind.SERVER]
    assert kept == [low]


def _exported(telemetry: CapturedTelemetry) -> bytes:
    return encode_spans(telemetry.spans()).SerializeToString()


@pytest.mark.parametrize("carrier", ["header", "meta"])
@pytest.mark.parametrize("mode", ["join", "link"])
def test_a_callers_tracestate_is_dropped_at_the_boundary(carrier, mode):
    extra = {"traceparent": UNSAMPLED[:-2] + "01", "tracestate": TRACESTATE, "baggage": f"card={CARD}"}
    with instrumented(caller_context=mode) as telemetry:
        (span,) = served(telemetry, carrier, extra)
        exported = _exported(telemetry)
    assert not span.context.trace_state
    assert CARD.encode() not in exported


def _mask(value: object) -> object:
    return re.sub(r"\d{13,19}", "***", value) if isinstance(value, str) else value


@pytest.mark.parametrize("carrier", ["header", "meta"])
def test_a_trusted_callers_tracestate_passes_redact(carrier):
    extra = {"traceparent": UNSAMPLED[:-2] + "01", "tracestate": TRACESTATE}
    with instrumented(caller_context="trust", redact=_mask) as telemetry:
        (span,) = served(telemetry, carrier, extra)
        exported = _exported(telemetry)
    assert dict(span.context.trace_state) == {"vendor": "card-***", "other": "ok"}
    assert CARD.encode() not in exported


def test_a_refused_request_treats_the_callers_context_alike(mcpobs_telemetry):
    """The transport's own refusal (a name header that does not match) is recorded despite `-00`."""
    refused = {**CALL_HEADERS, "mcp-name": "other", "traceparent": UNSAMPLED, "tracestate": TRACESTATE}
    with serve_http(create_server().streamable_http_app()) as base, httpx2.Client(timeout=10) as http:
        response = http.post(base + "/mcp", headers=refused, content=json.dumps(call()).encode())
        assert response.status_code == 400
        (span,) = settle(mcpobs_telemetry, 1)
    assert f"{span.context.trace_id:032x}" == TRACE_ID and not span.context.trace_state


def test_caller_context_is_checked_and_read_from_the_environment():
    assert settings_from({}, {}).caller_context == "join"
    assert settings_from({}, {"OTEL_PYTHON_MCP_CALLER_CONTEXT": "Trust"}).caller_context == "trust"
    assert (
        settings_from({"caller_context": "link"}, {"OTEL_PYTHON_MCP_CALLER_CONTEXT": "trust"}).caller_context == "link"
    )
    with pytest.raises(ConfigurationError, match=r"OTEL_PYTHON_MCP_CALLER_CONTEXT='honor'.*'join'"):
        settings_from({}, {"OTEL_PYTHON_MCP_CALLER_CONTEXT": "honor"})
    with pytest.raises(ConfigurationError, match=r"caller_context=True"):
        settings_from({"caller_context": True}, {})


class _BaggageSeen(SpanProcessor):
    """What a baggage span processor (opentelemetry-processor-baggage) would copy onto each span."""

    def __init__(self) -> None:
        self.seen: list[dict[str, object]] = []

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        self.seen.append(dict(baggage.get_all(parent_context)))


@pytest.mark.parametrize("carrier", ["header", "meta"])
def test_a_callers_baggage_reaches_no_span_processor(mcpobs_telemetry, carrier):
    processor = _BaggageSeen()
    mcpobs_telemetry.tracer_provider.add_span_processor(processor)
    (span,) = served(mcpobs_telemetry, carrier, {"traceparent": UNSAMPLED[:-2] + "01", "baggage": f"card={CARD}"})
    assert f"{span.context.trace_id:032x}" == TRACE_ID
    assert processor.seen and not any(processor.seen)
