"""A real OTLP/HTTP receiver on loopback, for tests that export over the wire without a collector.

It parses every export it is sent: the spans are counted, the metric names kept. Any other
request (the reachability check's `HEAD`) gets an answer, as a collector's would.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


class OtlpReceiver:
    """Listens on `port` (0: one the OS picks) once `running()`."""

    def __init__(self, port: int = 0) -> None:
        self.spans = 0
        self.metric_names: set[str] = set()
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
            count = sum(len(s.spans) for r in traces.resource_spans for s in r.scope_spans)
            with self.lock:
                self.spans += count
        elif path.endswith("/v1/metrics"):
            metrics = ExportMetricsServiceRequest()
            metrics.ParseFromString(body)
            with self.lock:
                self.metric_names.update(
                    m.name for r in metrics.resource_metrics for s in r.scope_metrics for m in s.metrics
                )

    @contextmanager
    def running(self) -> Iterator[OtlpReceiver]:
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()
