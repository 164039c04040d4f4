"""Where the demo's traces and metrics go, and whether the endpoint takes them, before it sends any.

The demo promises to say exactly what happened to each signal. The exporters alone cannot:
an OTLP/HTTP endpoint that answers but takes no such signal (Jaeger's port asked for metrics
answers 404) makes the SDK log ``Failed to export metrics batch code: 404`` at every export,
and one that nothing answers at is only reported in a log line. So each signal's URL is
resolved as the OTLP exporter resolves it (the per-signal variable as it is, else the base
endpoint plus ``/v1/<signal>``, else the default), and asked with an empty OTLP request, which
a receiver of that signal accepts and stores nothing from. A signal whose endpoint refuses is
turned off for the run and reported as such, with the variable to change.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import Literal

Signal = Literal["traces", "metrics"]
SIGNALS: tuple[Signal, ...] = ("traces", "metrics")
_DEFAULT_BASE = "http://localhost:4318"
_PROBE_TIMEOUT = 2.0


@dataclass(frozen=True)
class Destination:
    """What one signal's settings say, and (for OTLP over HTTP) what its endpoint answered."""

    signal: Signal
    state: Literal["sent", "off", "console", "refused", "unreachable", "other"]
    url: str = ""
    variable: str = ""  # the variable that chose `url`, or the one to set
    detail: str = ""

    @property
    def sending(self) -> bool:
        return self.state in ("sent", "console", "other")

    def line(self) -> str:
        """One line saying what happened to this signal, and how to change it when it went nowhere."""
        name = f"{self.signal}:".ljust(9)
        if self.state == "sent":
            return f"{name}sent to {self.url} ({self.variable})"
        if self.state == "off":
            return f"{name}off ({self.detail}=none)"
        if self.state == "console":
            return f"{name}printed on stderr by the console exporter"
        if self.state == "other":
            return f"{name}{self.detail}"
        what = "nothing answers at" if self.state == "unreachable" else "refused by"
        fix = f"Set OTEL_EXPORTER_OTLP_{self.signal.upper()}_ENDPOINT to an OTLP endpoint that takes {self.signal}"
        hint = (
            " (scripts/stack prints Prometheus's)" if self.signal == "metrics" else " (scripts/stack prints Jaeger's)"
        )
        return f"{name}not sent: {what} {self.url} (from {self.variable}; {self.detail}). {fix}{hint}."


def _exporter_var(signal: Signal) -> str:
    return f"OTEL_{signal.upper()}_EXPORTER"


def resolve(signal: Signal, env: Mapping[str, str]) -> Destination:
    """Where `signal` goes under `env`, without asking the endpoint."""
    exporter_var = _exporter_var(signal)
    exporters = [n.strip().lower() for n in env.get(exporter_var, "otlp").split(",") if n.strip()] or ["otlp"]
    if exporters == ["none"]:
        return Destination(signal, "off", detail=exporter_var)
    if exporters == ["console"]:
        return Destination(signal, "console")
    if exporters != ["otlp"]:
        return Destination(signal, "other", detail=f"to the exporters {exporter_var} names: {', '.join(exporters)}")
    upper = signal.upper()
    protocol = (
        env.get(f"OTEL_EXPORTER_OTLP_{upper}_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf"
    )
    own, base = f"OTEL_EXPORTER_OTLP_{upper}_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"
    if protocol.strip() != "http/protobuf":
        endpoint = env.get(own) or env.get(base) or "localhost:4317"
        return Destination(signal, "other", detail=f"to {endpoint} over OTLP/{protocol.strip()} (not checked)")
    if url := env.get(own, "").strip():
        return Destination(signal, "sent", url, own)
    if root := env.get(base, "").strip():
        return Destination(signal, "sent", f"{root.rstrip('/')}/v1/{signal}", base)
    return Destination(signal, "sent", f"{_DEFAULT_BASE}/v1/{signal}", f"{base}, not set: the default")


def probe(destination: Destination) -> Destination:
    """`destination` as its endpoint answered an empty OTLP request (only OTLP over HTTP is asked)."""
    if destination.state != "sent":
        return destination
    variable = destination.variable
    request = urllib.request.Request(
        destination.url, data=b"", method="POST", headers={"Content-Type": "application/x-protobuf"}
    )
    try:
        with urllib.request.urlopen(request, timeout=_PROBE_TIMEOUT):
            return destination
    except urllib.error.HTTPError as error:
        why = f"HTTP {error.code}" + (f": it takes no {destination.signal} at that path" if error.code == 404 else "")
        return Destination(destination.signal, "refused", destination.url, variable, why)
    except (OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        return Destination(destination.signal, "unreachable", destination.url, variable, str(reason))


def check(env: MutableMapping[str, str]) -> dict[Signal, Destination]:
    """Each signal's destination, asked; a signal refused or unreachable is set to ``none`` in `env`."""
    found: dict[Signal, Destination] = {}
    for signal in SIGNALS:
        found[signal] = destination = probe(resolve(signal, env))
        if destination.state in ("refused", "unreachable"):
            env[_exporter_var(signal)] = "none"  # no retries, no SDK error line per export
    return found
