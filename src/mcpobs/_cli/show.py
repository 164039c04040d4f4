"""`python -m mcpobs show`: what Jaeger and Prometheus hold for a service, printed as the demo prints it.

The stack `scripts/stack` starts has no web UI (the Jaeger built from its Go module serves
only its APIs, and Prometheus's UI assets are not in its module either), and a server reached
over SSH or a CI log has none either. This reads Jaeger's query API (``/api/traces``: whole
traces, so a client's spans and the server's come back joined, whichever service they carry)
and Prometheus's HTTP API, and prints the traces as trees and the request metrics as the
demo's table (`render`).

Counts are the counters themselves (requests since each process started, as last exported
within the window), not a rate: one export after one run is one point, and a rate or an
increase needs two, so it would show nothing (or 0) exactly when a newcomer looks first.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TextIO

from mcpobs import semconv as S
from mcpobs._cli import CommandError, render
from mcpobs._cli.render import printable
from mcpobs._cli.stores.jaeger import Jaeger, jaeger_answer, jaeger_base
from mcpobs._cli.stores.prometheus import PROMETHEUS_OTLP, Prometheus, prometheus_base
from mcpobs._cli.stores.query_api import service_name

_AHEAD_S = 300
"""The query window ends this far ahead of now, so a clock slightly ahead still finds the newest traces."""
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
FAILED: frozenset[str] = frozenset(S.Outcome) - {S.Outcome.OK, S.Outcome.CANCELLED, S.Outcome.PENDING_INPUT}
"""Outcomes `--failures` keeps: the tool's failures, the server's bugs and the caller's mistakes."""
_METRICS = (S.SERVER_REQUESTS, S.SERVER_OPERATION_DURATION, S.CLIENT_REQUESTS, S.CLIENT_OPERATION_DURATION)
_BY = (S.MCP_METHOD_NAME, S.GEN_AI_TOOL_NAME, S.OUTCOME, S.FAILURE_BOUNDARY)
_JAEGER_FIX = (
    "Start the backends with scripts/stack (or docker compose up), or pass --jaeger HOST:PORT "
    "(or set JAEGER_QUERY_HTTP) where Jaeger's query API listens."
)
_PROMETHEUS_FIX = (
    "Start the backends with scripts/stack (or docker compose up), pass --prometheus HOST:PORT, "
    "or --no-metrics for the traces alone."
)
_SERVICES_SHOWN = 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--service", default=None, help="service.name (default: OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES)"
    )
    parser.add_argument(
        "--jaeger", default=None, help="Jaeger's query address (default: JAEGER_QUERY_HTTP, else 127.0.0.1:16686)"
    )
    parser.add_argument(
        "--prometheus",
        default=None,
        help="Prometheus's address (default: from OTEL_EXPORTER_OTLP_METRICS_ENDPOINT when it is Prometheus's OTLP "
        "receiver, else PROMETHEUS_LISTEN, else 127.0.0.1:9090)",
    )
    parser.add_argument(
        "--failures", action="store_true", help="only traces and series with a tool_error, server_error or client_error"
    )
    parser.add_argument("--since", default="15m", help="how far back, e.g. 30s, 15m, 2h, 1d (default 15m)")
    parser.add_argument("--limit", type=int, default=10, help="at most this many traces, the newest (default 10)")
    parser.add_argument("--no-metrics", action="store_true", help="traces only: do not ask Prometheus")


@dataclass(frozen=True)
class Trace:
    trace_id: str
    spans: tuple[render.Span, ...]

    @property
    def start_ns(self) -> int:
        return min(s.start_ns for s in self.spans)

    @property
    def services(self) -> list[str]:
        return sorted({s.service for s in self.spans if s.service})

    @property
    def failed(self) -> bool:
        return any(s.attributes.get(S.OUTCOME) in FAILED for s in self.spans)


def seconds(since: str) -> int:
    """``15m`` -> 900; a `CommandError` for anything but a number and one of s, m, h, d."""
    match = re.fullmatch(r"\s*(\d+)\s*([smhd])\s*", since)
    if not match or int(match[1]) == 0:
        raise CommandError(f"--since {since!r} is not a duration: use a whole number and s, m, h or d, e.g. 15m")
    return int(match[1]) * _UNITS[match[2]]


# --- Jaeger --------------------------------------------------------------------------------


def traces_of(answer: Mapping[str, Any]) -> list[Trace]:
    """Jaeger's ``/api/traces`` answer as traces, oldest first."""
    return _traces(jaeger_answer(answer))


def _traces(found: Iterable[tuple[str, list[render.Span]]]) -> list[Trace]:
    """Traces with spans, oldest first."""
    return sorted((Trace(trace_id, tuple(spans)) for trace_id, spans in found if spans), key=lambda t: t.start_ns)


def fetch_traces(jaeger: Jaeger, service: str, window_s: int, limit: int, failures: bool) -> list[Trace]:
    """The newest `limit` traces of `service` in the window (with `failures`, only failed ones), oldest first."""
    now_us = int(time.time() * 1e6)
    params = {
        "service": service,
        "start": str(now_us - window_s * 1_000_000),
        "end": str(now_us + _AHEAD_S * 1_000_000),
        "limit": str(limit),
    }
    queries = [params]
    if failures:  # one query per failed outcome: Jaeger matches one tag value at a time
        queries = [{**params, "tags": json.dumps({S.OUTCOME: outcome})} for outcome in sorted(FAILED)]
    found: dict[str, Trace] = {}
    for query in queries:
        for trace in _traces(jaeger.traces(query)):
            found.setdefault(trace.trace_id, trace)
    traces = sorted(found.values(), key=lambda t: t.start_ns)
    if failures:
        traces = [t for t in traces if t.failed]
    return traces[-limit:]


# --- Prometheus ----------------------------------------------------------------------------


def metric_query(name: str, service: str, window: str) -> str:
    """The counter (or a histogram's `_count`/`_sum`) as last exported in the window, summed by the table's labels."""
    by = ", ".join(S.prometheus_label(a) for a in _BY)
    job = service.replace("\\", "\\\\").replace('"', '\\"')
    return f'sum by ({by}) (last_over_time({name}{{job="{job}"}}[{window}]))'


def metric_rows(results: Iterable[tuple[str, Sequence[Mapping[str, Any]], str]]) -> list[render.MetricRow]:
    """Rows from (metric, result vector, which) answers; `which` is ``value``, ``count`` or ``sum``."""
    merged: dict[tuple[str, ...], dict[str, float]] = {}
    for metric, vector, which in results:
        for sample in vector:
            labels = sample.get("metric", {})
            key = (metric, *(str(labels.get(S.prometheus_label(a), "")) for a in _BY))
            merged.setdefault(key, {})[which] = float(sample["value"][1])
    rows: list[render.MetricRow] = []
    for (metric, method, tool, outcome, boundary), values in merged.items():
        if "value" in values:
            rows.append(render.MetricRow(metric, method, tool, outcome, boundary, value=values["value"]))
        else:
            count = values.get("count", 0.0)
            rows.append(render.MetricRow(metric, method, tool, outcome, boundary, count=count, total=values.get("sum")))
    return rows


def fetch_metrics(prometheus: Prometheus, service: str, window: str) -> list[render.MetricRow]:
    answers: list[tuple[str, Sequence[Mapping[str, Any]], str]] = []
    for spec in _METRICS:
        name = S.prometheus_name(spec)
        parts = (("_count", "count"), ("_sum", "sum")) if spec.instrument == "histogram" else (("", "value"),)
        for suffix, which in parts:
            answers.append((spec.name, prometheus.vector(metric_query(name + suffix, service, window)), which))
    return metric_rows(answers)


# --- The command ---------------------------------------------------------------------------


def write_traces(traces: Sequence[Trace], out: TextIO) -> None:
    for trace in traces:
        when = datetime.fromtimestamp(trace.start_ns / 1e9, UTC).strftime("%Y-%m-%d %H:%M:%S")
        services = ", ".join(printable(s, 80) for s in trace.services)
        out.write(f"trace {printable(trace.trace_id, 64)} {when} UTC  ({services})\n")
        render.tree(trace.spans, out)


def run(args: argparse.Namespace, out: TextIO, env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    window_s = seconds(args.since)
    window = args.since.strip()
    if args.limit < 1:
        raise CommandError(f"--limit {args.limit}: at least 1 trace")
    service = args.service or service_name()
    jaeger = Jaeger(args.jaeger or jaeger_base(), _JAEGER_FIX)
    prometheus = Prometheus(args.prometheus or prometheus_base(env), _PROMETHEUS_FIX)

    traces = fetch_traces(jaeger, service, window_s, args.limit, args.failures)
    rows = [] if args.no_metrics else fetch_metrics(prometheus, service, window)
    if not traces:
        raise CommandError(_no_traces(jaeger, service, window, args.failures))
    which = "failed traces" if args.failures else "traces"
    out.write(
        f"The newest {len(traces)} {which} of {service} in the last {window} (Jaeger at {jaeger.base}; newest last)\n"
        f"(name, kind, duration, {S.OUTCOME}, key attributes):\n"
    )
    write_traces(traces, out)
    if args.no_metrics:
        return 0
    if args.failures:
        rows = [r for r in rows if r.outcome in FAILED]
    out.write(
        f"\nMetrics of job={service} in Prometheus at {prometheus.base} "
        f"(counter values since each process started, as last exported in the last {window}):\n"
    )
    if rows:
        render.table(rows, out)
    else:
        out.write(
            "  none yet: metrics are exported every OTEL_METRIC_EXPORT_INTERVAL ms (60000 unless set; scripts/stack "
            "prints 5000) and when the process exits; check OTEL_EXPORTER_OTLP_METRICS_ENDPOINT points at "
            f"{prometheus.base}{PROMETHEUS_OTLP}.\n"
        )
    return 0


def _no_traces(jaeger: Jaeger, service: str, window: str, failures: bool) -> str:
    if failures:
        return (
            f"no failed traces of {service} in the last {window} in Jaeger at {jaeger.base}; without --failures for all"
        )
    services = [printable(s, 80) for s in jaeger.services() if s != "jaeger"]
    if len(services) > _SERVICES_SHOWN:
        services[_SERVICES_SHOWN:] = [f"{len(services) - _SERVICES_SHOWN} more"]
    has = f"it has traces of: {', '.join(services)}" if services else "it has no traces of any service yet"
    return (
        f"no traces of service {service!r} in the last {window} in Jaeger at {jaeger.base} ({has}). Spans leave a "
        "process in batches every 5 s (and when it exits): wait a few seconds and run this again. If it stays "
        "empty, check that the program sets OTEL_SERVICE_NAME to this name and OTEL_EXPORTER_OTLP_TRACES_ENDPOINT "
        "to this Jaeger's OTLP endpoint (docs/troubleshooting.md)."
    )
