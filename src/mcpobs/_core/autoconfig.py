"""Configure OpenTelemetry from the standard `OTEL_*` variables when the application has not.

`mcpobs.instrument()` with no providers calls `configure()` (and so does the zero-code hook,
`zero_code.py`; `MCPInstrumentor` itself never does). A signal whose global provider the
application already set (its own code, or `opentelemetry-instrument`) is left alone; any other
gets an SDK provider with a batch exporter chosen by `OTEL_{TRACES,METRICS,LOGS}_EXPORTER`,
set as the global provider and flushed at exit (the SDK providers register that themselves).

The SDK reads most settings itself: `Resource.create()` reads `OTEL_SERVICE_NAME` and
`OTEL_RESOURCE_ATTRIBUTES`, the OTLP exporters read `OTEL_EXPORTER_OTLP_*`, the periodic reader
`OTEL_METRIC_EXPORT_INTERVAL`, the tracer provider `OTEL_TRACES_SAMPLER`. What is left here is
choosing exporters through the same entry points the SDK uses, and checking the values the
SDK would otherwise reject with a traceback, so a mistake costs one log line and never the
application.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Any, Literal
from urllib.parse import urlparse

from opentelemetry import metrics, trace
from opentelemetry.environment_variables import OTEL_LOGS_EXPORTER, OTEL_METRICS_EXPORTER, OTEL_TRACES_EXPORTER
from opentelemetry.sdk.environment_variables import (
    OTEL_EXPORTER_OTLP_ENDPOINT,
    OTEL_EXPORTER_OTLP_LOGS_ENDPOINT,
    OTEL_EXPORTER_OTLP_LOGS_PROTOCOL,
    OTEL_EXPORTER_OTLP_METRICS_ENDPOINT,
    OTEL_EXPORTER_OTLP_METRICS_PROTOCOL,
    OTEL_EXPORTER_OTLP_PROTOCOL,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
    OTEL_METRIC_EXPORT_INTERVAL,
    OTEL_SDK_DISABLED,
)
from opentelemetry.sdk.resources import Resource

from mcpobs._core import reachability as _reachability
from mcpobs._core import service_version as _service_version
from mcpobs._core import shutdown as _shutdown
from mcpobs._core.config import (
    DEFAULT_SHUTDOWN_TIMEOUT,
    GONE_STOP_GRACE_ENV,
    SHUTDOWN_TIMEOUT_ENV,
    TERMINATION_GRACE_ENV,
)
from mcpobs._core.guard import logger
from mcpobs._core.text import for_log
from mcpobs._core.uri import scrub

Signal = Literal["traces", "metrics", "logs"]

_EXPORTER_VAR: dict[Signal, str] = {
    "traces": OTEL_TRACES_EXPORTER,
    "metrics": OTEL_METRICS_EXPORTER,
    "logs": OTEL_LOGS_EXPORTER,
}
_PROTOCOL_VAR: dict[Signal, str] = {
    "traces": OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
    "metrics": OTEL_EXPORTER_OTLP_METRICS_PROTOCOL,
    "logs": OTEL_EXPORTER_OTLP_LOGS_PROTOCOL,
}
_ENDPOINT_VAR: dict[Signal, str] = {
    "traces": OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    "metrics": OTEL_EXPORTER_OTLP_METRICS_ENDPOINT,
    "logs": OTEL_EXPORTER_OTLP_LOGS_ENDPOINT,
}
# Traces and metrics default to OTLP as the specification says; logs stay opt-in, because a
# trace backend such as Jaeger refuses them and every export would log a failure.
_DEFAULT_EXPORTER: dict[Signal, str] = {"traces": "otlp", "metrics": "otlp", "logs": "none"}
# The specification's default protocol, and the one Prometheus's OTLP receiver speaks.
_DEFAULT_PROTOCOL = "http/protobuf"
_OTLP_BY_PROTOCOL = {"http/protobuf": "otlp_proto_http", "grpc": "otlp_proto_grpc"}
_PACKAGE_BY_OTLP = {
    "otlp_proto_http": "opentelemetry-exporter-otlp-proto-http",
    "otlp_proto_grpc": "opentelemetry-exporter-otlp-proto-grpc",
}


class Misconfigured(Exception):
    """One setting cannot be used; the message names the variable and the fix."""


def configure(environ: Mapping[str, str] | None = None, shutdown_timeout: float | None = None) -> None:
    """Set SDK providers for every signal the application left unconfigured. Never raises.

    They are flushed at exit and on SIGTERM within `shutdown_timeout` seconds (when None,
    `OTEL_PYTHON_MCP_SHUTDOWN_TIMEOUT`, else 3 s): see `shutdown.py`.
    """
    env = os.environ if environ is None else environ
    if env.get(OTEL_SDK_DISABLED, "").strip().lower() == "true":
        logger.debug("mcpobs: %s=true, OpenTelemetry is left unconfigured", OTEL_SDK_DISABLED)
        return
    try:
        resource = Resource.create()
    except Exception as exc:  # a malformed OTEL_RESOURCE_ATTRIBUTES, say
        # The type only: the message may repeat the variable's values.
        logger.error(
            "mcpobs: the OpenTelemetry resource could not be built (%s); check OTEL_RESOURCE_ATTRIBUTES",
            type(exc).__qualname__,
        )
        resource = Resource.get_empty()
    providers: list[Any] = []
    if not tracing_configured():
        providers.append(_configure_traces(env, resource))
    if not metrics_configured():
        providers.append(_configure_metrics(env, resource))
    if not logs_configured():
        providers.append(_configure_logs(env, resource))
    made = [p for p in providers if p is not None]
    _service_version.wait_for_release(resource, made)
    deadline = shutdown_timeout if shutdown_timeout is not None else shutdown_timeout_from(env)
    _shutdown.install(made, deadline)


def shutdown_timeout_from(env: Mapping[str, str]) -> float:
    """`OTEL_PYTHON_MCP_SHUTDOWN_TIMEOUT` in seconds; a value that is not a positive number costs one line."""
    found = _seconds(env, SHUTDOWN_TIMEOUT_ENV, DEFAULT_SHUTDOWN_TIMEOUT)
    return DEFAULT_SHUTDOWN_TIMEOUT if found is None else found


def termination_grace_from(env: Mapping[str, str]) -> float | None:
    """`OTEL_PYTHON_MCP_TERMINATION_GRACE` in seconds: from SIGTERM to the orchestrator's SIGKILL; None when not set."""
    if env.get(GONE_STOP_GRACE_ENV, "").strip() and not env.get(TERMINATION_GRACE_ENV, "").strip():
        logger.warning(
            "mcpobs: %s is no longer read (it guessed when the calls in flight were abandoned); set %s to the "
            "seconds from SIGTERM to your orchestrator's SIGKILL (Kubernetes' terminationGracePeriodSeconds).",
            GONE_STOP_GRACE_ENV,
            TERMINATION_GRACE_ENV,
        )
    return _seconds(env, TERMINATION_GRACE_ENV, None)


def _seconds(env: Mapping[str, str], name: str, default: float | None) -> float | None:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not _is_positive_number(raw):
        instead = "it is ignored" if default is None else f"the default ({default:g}) is used"
        logger.error("mcpobs: %s=%s is not a number of seconds; %s.", name, for_log(repr(raw)), instead)
        return default
    return float(raw)


def tracing_configured() -> bool:
    """Whether someone already set the global tracer provider."""
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


def metrics_configured() -> bool:
    """Whether someone already set the global meter provider (the API's default is a proxy)."""
    # The API exports no name for its default proxy; this is the one way to tell "not set".
    from opentelemetry.metrics._internal import _ProxyMeterProvider  # pyright: ignore[reportPrivateUsage]

    return not isinstance(metrics.get_meter_provider(), _ProxyMeterProvider)


def logs_configured() -> bool:
    """Whether someone already set the global logger provider."""
    from opentelemetry._logs import get_logger_provider
    from opentelemetry._logs._internal import ProxyLoggerProvider

    return not isinstance(get_logger_provider(), ProxyLoggerProvider)


def exporter_classes(signal: Signal, env: Mapping[str, str]) -> list[tuple[str, type]]:
    """The exporter classes `OTEL_<SIGNAL>_EXPORTER` names, from the SDK's entry points.

    Raises `Misconfigured` for a name no installed package provides, an unknown OTLP
    protocol, or an endpoint that is not an http(s) URL.
    """
    var = _EXPORTER_VAR[signal]
    raw = env.get(var, "").strip() or _DEFAULT_EXPORTER[signal]
    names = [n.strip().lower() for n in raw.split(",") if n.strip()]
    if names == ["none"]:
        return []
    group = f"opentelemetry_{signal}_exporter"
    found: list[tuple[str, type]] = []
    for name in names:
        entry = _otlp_entry(signal, env) if name == "otlp" else name
        if entry in _PACKAGE_BY_OTLP:
            _check_endpoint(signal, env)
        matches = list(entry_points(group=group, name=entry))
        if not matches and name == "otlp":
            protocol_var = _protocol_var(signal, env)
            raise Misconfigured(
                f"{protocol_var}={env.get(protocol_var)!r} needs {_PACKAGE_BY_OTLP[entry]}; "
                "install it, or use 'http/protobuf'."
            )
        if not matches:
            installed = sorted({"none", "otlp", *(e.name for e in entry_points(group=group))})
            raise Misconfigured(
                f"{var}={raw!r}: no installed exporter is called {entry!r}; use one of: {', '.join(installed)}."
            )
        found.append((name, matches[0].load()))
    return found


def _protocol_var(signal: Signal, env: Mapping[str, str]) -> str:
    return _PROTOCOL_VAR[signal] if env.get(_PROTOCOL_VAR[signal], "").strip() else OTEL_EXPORTER_OTLP_PROTOCOL


def _otlp_entry(signal: Signal, env: Mapping[str, str]) -> str:
    var = _protocol_var(signal, env)
    protocol = env.get(var, "").strip().lower() or _DEFAULT_PROTOCOL
    if protocol not in _OTLP_BY_PROTOCOL:
        raise Misconfigured(f"{var}={protocol!r} is not an OTLP protocol; use 'http/protobuf' (or 'grpc').")
    return _OTLP_BY_PROTOCOL[protocol]


def _endpoint_var(signal: Signal, env: Mapping[str, str]) -> str | None:
    """The variable that sets this signal's OTLP endpoint (the signal's own first), if any is set."""
    return next((v for v in (_ENDPOINT_VAR[signal], OTEL_EXPORTER_OTLP_ENDPOINT) if env.get(v, "").strip()), None)


def _check_endpoint(signal: Signal, env: Mapping[str, str]) -> None:
    var = _endpoint_var(signal, env)
    if var is not None:
        value = env[var].strip()
        url = urlparse(value)
        if url.scheme not in ("http", "https") or not url.hostname:
            # shown without its userinfo and query values: an endpoint may carry credentials
            raise Misconfigured(
                f"{var}={for_log(repr(scrub(value)))} is not a URL; use one like 'http://localhost:4318'."
            )


def _exporters(signal: Signal, env: Mapping[str, str]) -> list[Any]:
    """Exporter instances for one signal; on a mistake, one log line and none."""
    try:
        classes = exporter_classes(signal, env)
    except Misconfigured as exc:
        logger.error("mcpobs: %s %s are not exported; the application runs on.", exc, signal)
        return []
    made: list[Any] = []
    for name, cls in classes:
        try:
            # Console output goes to stderr: on stdio, stdout is the MCP wire.
            made.append(cls(out=sys.stderr, formatter=_one_line) if name == "console" else _guarded(cls(), signal, env))
        except Exception as exc:
            # The type only: an exporter's message may repeat its endpoint or headers (OTEL_EXPORTER_OTLP_HEADERS).
            logger.error(
                "mcpobs: the %r %s exporter (%s) failed to start (%s); %s are not exported there. "
                "Check its OTEL_EXPORTER_* variables.",
                name,
                signal,
                _EXPORTER_VAR[signal],
                type(exc).__qualname__,
                signal,
            )
    return made


def _guarded(exporter: Any, signal: Signal, env: Mapping[str, str]) -> Any:
    """An OTLP exporter drops batches at once while its endpoint refuses connections (see reachability)."""
    if type(exporter).__module__.startswith("opentelemetry.exporter.otlp"):
        variable = _endpoint_var(signal, env)
        return _reachability.guard(exporter, signal, variable or OTEL_EXPORTER_OTLP_ENDPOINT, variable is None)
    return exporter


def _one_line(item: Any) -> str:
    return item.to_json(indent=None) + "\n"


def _configure_traces(env: Mapping[str, str], resource: Resource) -> Any:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=resource, shutdown_on_exit=False)  # flushed by `shutdown`, bounded
    for exporter in _exporters("traces", env):
        provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return provider


def _configure_metrics(env: Mapping[str, str], resource: Resource) -> Any:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader

    interval = env.get(OTEL_METRIC_EXPORT_INTERVAL, "").strip()
    if interval and not _is_positive_number(interval):
        logger.error(
            "mcpobs: %s=%s is not a number of milliseconds; the default (60000) is used.",
            OTEL_METRIC_EXPORT_INTERVAL,
            for_log(repr(interval)),
        )
        interval = "60000"
    readers = [
        e if isinstance(e, MetricReader) else PeriodicExportingMetricReader(e, float(interval) if interval else None)
        for e in _exporters("metrics", env)
    ]
    provider = MeterProvider(resource=resource, metric_readers=readers, shutdown_on_exit=False)
    metrics.set_meter_provider(provider)
    return provider


def _configure_logs(env: Mapping[str, str], resource: Resource) -> Any:
    """With a logs exporter, `logging` records carry the trace and span of the request they are in."""
    exporters = _exporters("logs", env)
    if not exporters:
        return None
    from opentelemetry._logs import set_logger_provider
    from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor

    provider = LoggerProvider(resource=resource, shutdown_on_exit=False)
    for exporter in exporters:
        provider.add_log_record_processor(BatchLogRecordProcessor(exporter))
    set_logger_provider(provider)
    with warnings.catch_warnings():
        # The SDK's handler is deprecated in favour of a contrib package we do not require;
        # it stays in every 1.x SDK and reads the current span for each record.
        warnings.simplefilter("ignore", DeprecationWarning)
        handler = LoggingHandler(level=logging.NOTSET, logger_provider=provider)
    logging.getLogger().addHandler(handler)
    return provider


def _is_positive_number(text: str) -> bool:
    try:
        return float(text) > 0
    except ValueError:
        return False
