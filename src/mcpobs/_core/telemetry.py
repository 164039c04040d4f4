"""The one small object every hook is handed: tracer, meter instruments and settings."""

from __future__ import annotations

import os
from typing import Any, cast

from opentelemetry import metrics, trace
from opentelemetry.metrics import Histogram, UpDownCounter
from opentelemetry.trace import Link, NonRecordingSpan, Span, SpanKind

from mcpobs import semconv
from mcpobs._core import otel_releases
from mcpobs._core.config import Settings
from mcpobs._core.cost import configured_counter
from mcpobs._core.guard import logger, report
from mcpobs._core.privacy import Privacy
from mcpobs._core.tally import Tally, tally
from mcpobs._core.text import clean
from mcpobs._version import __version__


def _instrument(meter: metrics.Meter, spec: semconv.MetricSpec) -> Any:
    if spec.instrument == "histogram":
        return meter.create_histogram(
            spec.name,
            unit=spec.unit,
            description=spec.brief,
            explicit_bucket_boundaries_advisory=list(spec.buckets) if spec.buckets else None,
        )
    if spec.instrument == "counter":
        return tally(meter, spec)
    if spec.instrument == "gauge":
        return meter.create_gauge(spec.name, unit=spec.unit, description=spec.brief)
    return meter.create_up_down_counter(spec.name, unit=spec.unit, description=spec.brief)


class Telemetry:
    """Created once per `instrument()`; read-only afterwards, so hooks share it freely."""

    def __init__(
        self,
        settings: Settings,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        self.settings = settings
        self._tracer_provider = tracer_provider
        self._meter_provider = meter_provider
        self._limit = settings.max_attribute_length
        self.privacy = Privacy(settings)
        """The one step every text from outside passes before it is recorded (`_core.privacy`)."""
        self.tracer = trace.get_tracer(
            semconv.INSTRUMENTATION_NAME, __version__, tracer_provider, schema_url=otel_releases.SCHEMA_URL
        )
        meter = metrics.get_meter(
            semconv.INSTRUMENTATION_NAME, __version__, meter_provider, schema_url=otel_releases.SCHEMA_URL
        )
        self.server_duration: Histogram = _instrument(meter, semconv.SERVER_OPERATION_DURATION)
        self.client_duration: Histogram = _instrument(meter, semconv.CLIENT_OPERATION_DURATION)
        self.server_session_duration: Histogram = _instrument(meter, semconv.SERVER_SESSION_DURATION)
        self.client_session_duration: Histogram = _instrument(meter, semconv.CLIENT_SESSION_DURATION)
        self.server_requests: Tally = _instrument(meter, semconv.SERVER_REQUESTS)
        self.server_notifications: Tally = _instrument(meter, semconv.SERVER_NOTIFICATIONS)
        self.client_requests: Tally = _instrument(meter, semconv.CLIENT_REQUESTS)
        self.client_notifications: Tally = _instrument(meter, semconv.CLIENT_NOTIFICATIONS)
        self.progress_reports: Tally = _instrument(meter, semconv.PROGRESS_REPORTS)
        self.progress_capped: Tally = _instrument(meter, semconv.PROGRESS_CAPPED)
        self.subscription_streams: UpDownCounter = _instrument(meter, semconv.SUBSCRIPTION_STREAMS)
        self.subscription_events: Tally = _instrument(meter, semconv.SUBSCRIPTION_EVENTS)
        self.stale_calls: Tally = _instrument(meter, semconv.STALE_CALLS)
        self.catalog_size: Any = _instrument(meter, semconv.CATALOG_SIZE)
        self.catalog_size_tokens: Any = _instrument(meter, semconv.CATALOG_SIZE_TOKENS)
        self._meter = meter
        self.catalog_tokens, problem = configured_counter(os.environ)
        """How listings' tokens are counted (`_core/cost.py`): the estimate unless the environment names an encoding."""
        if problem:
            logger.warning("mcpobs: %s", problem)

    def create_instrument(self, spec: semconv.MetricSpec) -> Any:
        """An instrument for `spec` on this instrumentation's meter, for the features that own their
        instruments (`_tasks/metrics.py`): made once per `Telemetry`, as the ones above."""
        return _instrument(self._meter, spec)

    def providers(self) -> list[Any]:
        """The providers this instrumentation records to (given, or the global ones now)."""
        return [
            self._tracer_provider or trace.get_tracer_provider(),
            self._meter_provider or metrics.get_meter_provider(),
        ]

    def start_span(
        self,
        name: str,
        context: Any,
        kind: SpanKind,
        attributes: dict[str, Any],
        links: list[Link] | None = None,
        start_time: int | None = None,
    ) -> Span:
        """A span from the tracer, or, when its sampler or a span processor raises, a
        non-recording one that keeps the caller's trace context: the request is still timed
        and counted (metrics never depend on the trace pipeline), and the failure is logged.
        """
        try:
            return self.tracer.start_span(
                name, context=context, kind=kind, attributes=attributes, links=links, start_time=start_time
            )
        except Exception as exc:
            report("span start (the tracer provider's sampler or a span processor raised)", exc)
            return NonRecordingSpan(trace.get_current_span(context).get_span_context())

    def bound(self, value: object) -> str:
        """A string attribute value: cut to the configured length, valid UTF-8 (`text.clean`).

        Most values are short ASCII strings or integer request ids: those are answered here,
        as `clean` would answer them, without its call.
        """
        limit = self._limit
        kind = type(value)
        if kind is str:
            text = cast("str", value)
            if len(text) <= limit and text.isascii():
                return text
        elif kind is int:
            try:
                text = str(value)  # digits and a sign: ASCII
            except ValueError:  # more digits than `str` converts: `clean` says so
                return clean(value, limit)
            return text if len(text) <= limit else text[:limit]
        return clean(value, limit)


def end_once(span: Span) -> None:
    """End a span whose ending failed part way, unless it did end: a processor's `on_end`
    that raises leaves the span ended, and ending it again only makes the SDK warn."""
    if getattr(span, "end_time", None) is None:
        try:
            span.end()
        except Exception as exc:
            report("span end (fallback)", exc)
