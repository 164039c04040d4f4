"""Configuring OpenTelemetry belongs to `mcpobs.instrument()` and the zero-code hook, not the instrumentor.

`MCPInstrumentor().instrument()` (what contrib users and distros call) only instruments: no
global providers, no signal handler, no root log handler. `mcpobs.instrument()` and
`opentelemetry-instrument` configure from `OTEL_*` when nothing else did.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpobs._version import DISTRIBUTION

HERE = Path(__file__).parent
REPORT = (
    "import logging, signal, sys\n"
    f"sys.path.insert(0, {str(HERE)!r})\n"
    "from opentelemetry import metrics, trace\n"
    "from shop import create_server\n"
    "print(type(trace.get_tracer_provider()).__name__, type(metrics.get_meter_provider()).__name__,\n"
    "      signal.getsignal(signal.SIGTERM) is signal.SIG_DFL, len(logging.getLogger().handlers),\n"
    "      type(create_server().middleware[0]).__name__)\n"
)
ENV = {**os.environ, "OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "otlp"}


def _run(code: str, tmp_path: Path, *, zero_code: bool = False, env: dict | None = None) -> list[str]:
    script = tmp_path / "app.py"
    script.write_text(code + REPORT)
    command = [sys.executable, str(script)]
    if zero_code:
        command = [str(Path(sys.executable).parent / "opentelemetry-instrument"), *command]
    done = subprocess.run(command, env=env or ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1].split()


def test_the_instrumentor_configures_nothing_global(tmp_path):
    code = "from mcpobs import MCPInstrumentor\nMCPInstrumentor().instrument()\n"
    tracer, meter, default_sigterm, root_handlers, middleware = _run(code, tmp_path)
    assert (tracer, meter) == ("ProxyTracerProvider", "_ProxyMeterProvider")
    assert default_sigterm == "True" and root_handlers == "0"
    assert middleware == "ServerMiddleware"  # and it did instrument


def test_mcpobs_instrument_configures_from_otel_variables(tmp_path):
    tracer, _meter, default_sigterm, root_handlers, middleware = _run("import mcpobs\nmcpobs.instrument()\n", tmp_path)
    assert tracer == "TracerProvider" and middleware == "ServerMiddleware"
    assert default_sigterm == "False" and root_handlers == "1"  # flush on SIGTERM; logs exported


@pytest.mark.slow
def test_opentelemetry_instrument_configures_and_instruments(tmp_path):
    tracer, _meter, _sigterm, _handlers, middleware = _run("", tmp_path, zero_code=True)
    assert (tracer, middleware) == ("TracerProvider", "ServerMiddleware")
    off = {**ENV, "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS": DISTRIBUTION}
    tracer, _meter, _sigterm, _handlers, middleware = _run("", tmp_path, zero_code=True, env=off)
    assert (tracer, middleware) == ("ProxyTracerProvider", "OpenTelemetryMiddleware")
