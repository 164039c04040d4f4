"""A real OTLP/HTTP receiver on loopback, for tests that export over the wire without a collector.

It parses every export it is sent: the spans are counted, the metric names kept, and each
span and each sum or histogram data point is kept with the `service.instance.id` of the process
that sent it (`received_spans`, `points`), so a test can count what every process sent, and
what arrived twice. Any other request (the reachability check's `HEAD`) gets an answer, as a
collector's would.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


class ReceivedSpan(NamedTuple):
    instance: str
    """The `service.instance.id` of the process that sent it ("" when none)."""
    span_id: bytes
    name: str
    kind: int
    """The OTLP span kind: 2 server, 3 client."""
    attributes: dict[str, Any]
    parent: bytes = b""
    """The parent span's id (empty for a root)."""
    status: int = 0
    """The OTLP status code: 0 unset, 1 ok, 2 error."""
    trace_id: bytes = b""
    links: tuple[bytes, ...] = ()
    """The span ids it links to."""


class Point(NamedTuple):
    """One data point of a sum (its value) or a histogram (its count), as exported."""

    instance: str
    metric: str
    attributes: frozenset[tuple[str, Any]]
    value: float
    start: int
    time: int
    sum: float = 0.0
    """A histogram point's sum (0 for a sum's point)."""


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in pairs}


class OtlpReceiver:
    """Listens on `port` (0: one the OS picks) once `running()`."""

    def __init__(self, port: int = 0) -> None:
        self.spans = 0
        self.metric_names: set[str] = set()
        self.received_spans: list[ReceivedSpan] = []
        self.points: list[Point] = []
        self.bodies: list[bytes] = []
        """Every export's body as received (the bytes a backend would store)."""
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                receiver._received(self.path, body)
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def do_HEAD(self) -> None:
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port: int = self.server.server_address[1]
        self.traces_url = f"http://127.0.0.1:{self.port}/v1/traces"

    def _received(self, path: str, body: bytes) -> None:
        with self.lock:
            self.bodies.append(body)
        if path.endswith("/v1/traces"):
            traces = ExportTraceServiceRequest()
            traces.ParseFromString(body)
            spans = [
                ReceivedSpan(
                    _instance(r.resource),
                    span.span_id,
                    span.name,
                    span.kind,
                    _attributes(span.attributes),
                    span.parent_span_id,
                    span.status.code,
                    span.trace_id,
                    tuple(link.span_id for link in span.links),
                )
                for r in traces.resource_spans
                for s in r.scope_spans
                for span in s.spans
            ]
            with self.lock:
                self.spans += len(spans)
                self.received_spans += spans
        elif path.endswith("/v1/metrics"):
            metrics = ExportMetricsServiceRequest()
            metrics.ParseFromString(body)
            points: list[Point] = []
            for r in metrics.resource_metrics:
                instance = _instance(r.resource)
                for s in r.scope_metrics:
                    for m in s.metrics:
                        kind = m.WhichOneof("data")
                        for p in getattr(m, kind).data_points if kind in ("sum", "histogram") else ():
                            value = p.count if kind == "histogram" else (p.as_int or p.as_double)
                            labels = frozenset(_attributes(p.attributes).items())
                            points.append(
                                Point(
                                    instance,
                                    m.name,
                                    labels,
                                    value,
                                    p.start_time_unix_nano,
                                    p.time_unix_nano,
                                    p.sum if kind == "histogram" else 0.0,
                                )
                            )
            with self.lock:
                self.metric_names.update(
                    m.name for r in metrics.resource_metrics for s in r.scope_metrics for m in s.metrics
                )
                self.points += points

    def final_totals(self, metric: str, **labels: Any) -> dict[str, float]:
        """Per sending process, the last value of each of `metric`'s series with `labels`, added up.

        For cumulative sums and histograms (what mcpobs configures) that is each process's final
        count; a process whose counts were exported twice, or started from another's, shows here.
        """
        wanted = set(labels.items())
        last: dict[tuple[str, frozenset[tuple[str, Any]]], Point] = {}
        with self.lock:
            for p in self.points:
                if p.metric == metric and wanted <= p.attributes:
                    key = (p.instance, p.attributes)
                    if key not in last or p.time >= last[key].time:
                        last[key] = p
        totals: dict[str, float] = {}
        for (instance, _), p in last.items():
            totals[instance] = totals.get(instance, 0) + p.value
        return totals

    @contextmanager
    def running(self) -> Iterator[OtlpReceiver]:
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()


def _instance(resource: Any) -> str:
    return str(_attributes(resource.attributes).get("service.instance.id", ""))
