"""What differs between the supported OpenTelemetry releases (`_core/otel_releases.py`), on the real packages.

These run in the dev venv (the newest releases) and in scripts/test-otel-lowest's venv (the
lowest pyproject.toml allows), so each difference is checked on both sides of it.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.semconv.schemas import Schemas

from mcpobs import semconv as S
from mcpobs._core import otel_releases
from mcpobs._core.otel_releases import schema_url


@contextmanager
def _keep_alive_receiver() -> Iterator[tuple[int, list[int]]]:
    """An OTLP/HTTP endpoint that keeps connections open (HTTP/1.1); yields its port and each export's client port."""
    ports: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["content-length"]))
            ports.append(self.client_address[1])
            self._answer(200)

        def do_HEAD(self) -> None:  # the reachability check
            self._answer(404)

        def _answer(self, status: int) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], ports
    finally:
        server.shutdown()
        server.server_close()


FORKED = """
import os
import sys

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcpobs._core import reachability

memory = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(memory))
with provider.get_tracer("test").start_as_current_span("one"):
    pass
batch = memory.get_finished_spans()
exporter = OTLPSpanExporter(endpoint=sys.argv[1])
guarded = reachability.guard(exporter, "traces", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", False)
assert guarded is not exporter, "an http endpoint on loopback is guarded"
assert guarded.export(batch) == SpanExportResult.SUCCESS
assert guarded.export(batch) == SpanExportResult.SUCCESS
child = os.fork()
if child == 0:
    code = 1
    try:
        code = 0 if guarded.export(batch) == SpanExportResult.SUCCESS else 2
    finally:
        os._exit(code)
_, status = os.waitpid(child, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def test_a_forked_child_exports_on_a_connection_of_its_own(tmp_path):
    """The parent's keep-alive connection is the parent's: a child writing into it corrupts both.

    The exporter keeps its pooled connections in a `requests.Session` up to 1.44 and in an HTTP
    transport from 1.45; after a fork the child's copies are dropped in either, and its first
    export opens its own connection. (A process of its own: the test process has threads.)
    """
    script = tmp_path / "forked.py"
    script.write_text(FORKED)
    with _keep_alive_receiver() as (port, ports):
        url = f"http://127.0.0.1:{port}/v1/traces"
        done = subprocess.run([sys.executable, str(script), url], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    parent_first, parent_second, child_export = ports
    assert parent_second == parent_first, "the parent's exports share one keep-alive connection"
    assert child_export != parent_first, "the child wrote into its parent's connection"


def test_the_schema_url_is_the_packages_constant_where_it_has_one_and_spelled_alike_where_not():
    assert schema_url("1.21.0") == Schemas.V1_21_0.value
    assert schema_url("9.9.9") == Schemas.V1_21_0.value.replace("1.21.0", "9.9.9")
    assert S.SCHEMA_URL.endswith("/1.44.0")


def test_the_tracer_and_meter_carry_the_registrys_schema_url_on_this_release():
    """The URL the registry pins (and the docs print) is the one `otel_releases` spells from the installed package."""
    assert otel_releases.SCHEMA_URL == S.SCHEMA_URL
