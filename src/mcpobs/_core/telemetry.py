"""The one small object every hook is handed: tracer, meter instruments and settings."""

from __future__ import annotations

from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.metrics import Histogram, UpDownCounter

from mcpobs import semconv
from mcpobs._core.config import Settings
from mcpobs._core.tally import Tally, tally
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
        self.tracer = trace.get_tracer(
            semconv.INSTRUMENTATION_NAME, __version__, tracer_provider, schema_url=semconv.SCHEMA_URL
        )
        meter = metrics.get_meter(
            semconv.INSTRUMENTATION_NAME, __version__, meter_provider, schema_url=semconv.SCHEMA_URL
        )
        self.server_duration: Histogram = _instrument(meter, semconv.SERVER_OPERATION_DURATION)
        self.client_duration: Histogram = _instrument(meter, semconv.CLIENT_OPERATION_DURATION)
        self.server_session_duration: Histogram = _instrument(meter, semconv.SERVER_SESSION_DURATION)
        self.client_session_duration: Histogram = _instrument(meter, semconv.CLIENT_SESSION_DURATION)
        self.server_requests: Tally = _instrument(meter, semconv.SERVER_REQUESTS)
        self.client_requests: Tally = _instrument(meter, semconv.CLIENT_REQUESTS)
        self.progress_reports: Tally = _instrument(meter, semconv.PROGRESS_REPORTS)
        self.progress_capped: Tally = _instrument(meter, semconv.PROGRESS_CAPPED)
        self.subscription_streams: UpDownCounter = _instrument(meter, semconv.SUBSCRIPTION_STREAMS)
        self.subscription_events: Tally = _instrument(meter, semconv.SUBSCRIPTION_EVENTS)
        self.stale_calls: Tally = _instrument(meter, semconv.STALE_CALLS)

    def bound(self, value: object) -> str:
        """A string attribute value, cut to the configured length."""
        text = value if isinstance(value, str) else str(value)
        limit = self.settings.max_attribute_length
        return text if len(text) <= limit else text[:limit]
