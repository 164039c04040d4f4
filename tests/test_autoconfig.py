"""instrument() with no providers: OpenTelemetry configured from the standard OTEL_* variables.

Global providers can be set once per process, so each case runs a small application in a
subprocess, configured only by its environment, and reads what it exported: console
exporters write one JSON object per line to stderr (stdout is the MCP wire on stdio).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpobs._core import autoconfig as _autoconfig

HERE = Path(__file__).parent

APP = """
import asyncio, json, logging, sys
from opentelemetry import metrics, trace

logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="LOG %(name)s %(message)s")
if "own-providers" in sys.argv:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.metrics import MeterProvider
    trace.set_tracer_provider(TracerProvider())
    metrics.set_meter_provider(MeterProvider())
own = (trace.get_tracer_provider(), metrics.get_meter_provider())

import mcpobs
from mcp import Client
from shop import create_server

mcpobs.instrument()
server = create_server()

@server.tool()
def audited_refund(order_id: str) -> str:
    logging.getLogger("shop.audit").warning("refund audited")
    return "ok"

async def main():
    async with Client(server) as client:
        result = await client.call_tool("audited_refund", {"order_id": "O-1873"})
    return not result.is_error

ok = asyncio.run(main())
tracer_provider, meter_provider = trace.get_tracer_provider(), metrics.get_meter_provider()
print(json.dumps({
    "ok": ok,
    "tracer_provider": type(tracer_provider).__module__ + "." + type(tracer_provider).__name__,
    "meter_provider": type(meter_provider).__module__ + "." + type(meter_provider).__name__,
    "kept_own": tracer_provider is own[0] and meter_provider is own[1],
}), flush=True)
if "sigterm" in sys.argv:  # how a container stops a server: no atexit
    import os, signal, time
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(10)
"""

CONSOLE = {"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "console", "OTEL_LOGS_EXPORTER": "none"}


class Run:
    def __init__(self, proc: subprocess.CompletedProcess[str], returncode: int = 0) -> None:
        assert proc.returncode == returncode, proc.stderr
        *noise, last = proc.stdout.strip().splitlines()
        assert not noise, f"the application's stdout carried more than its own output: {noise}"
        self.result: dict[str, Any] = json.loads(last)
        self.exported = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{")]
        self.log_lines = [
            ln for ln in proc.stderr.splitlines() if ln.startswith("LOG ") and not ln.startswith("LOG shop")
        ]

    def spans(self) -> list[dict[str, Any]]:
        return [e for e in self.exported if "context" in e and "kind" in e]

    def server_span(self, name: str) -> dict[str, Any]:
        (span,) = [s for s in self.spans() if s["name"] == name and s["kind"] == "SpanKind.SERVER"]
        return span

    def log_records(self) -> list[dict[str, Any]]:
        return [e for e in self.exported if "body" in e]

    def metric_names(self) -> set[str]:
        return {
            m["name"]
            for e in self.exported
            for rm in e.get("resource_metrics", ())
            for sm in rm["scope_metrics"]
            for m in sm["metrics"]
        }


def run_app(env: dict[str, str], *args: str, returncode: int = 0) -> Run:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    proc = subprocess.run(
        [sys.executable, "-c", APP, *args],
        env={**clean, "PYTHONPATH": str(HERE), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    return Run(proc, returncode)


def test_no_providers_means_sdk_providers_from_the_standard_variables_flushed_at_exit():
    run = run_app(
        {
            **CONSOLE,
            "OTEL_SERVICE_NAME": "shop-auto",
            "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=test",
        }
    )
    assert run.result["ok"]
    assert run.result["tracer_provider"] == "opentelemetry.sdk.trace.TracerProvider"
    assert run.result["meter_provider"] == "opentelemetry.sdk.metrics._internal.MeterProvider"
    # The process exits right after the call: batch export only delivers because of the flush at exit.
    span = run.server_span("tools/call audited_refund")
    assert span["resource"]["attributes"]["service.name"] == "shop-auto"
    assert span["resource"]["attributes"]["deployment.environment.name"] == "test"
    assert span["attributes"]["mcpobs.outcome"] == "ok"
    assert "mcp.server.operation.duration" in run.metric_names()
    assert not run.log_lines


def test_sigterm_flushes_before_the_process_dies_of_it():
    run = run_app(CONSOLE, "sigterm", returncode=-signal.SIGTERM)
    assert [s for s in run.spans() if s["name"] == "tools/call audited_refund"]
    assert "mcp.server.operation.duration" in run.metric_names()


def test_logging_records_inside_a_request_carry_its_trace_when_logs_are_exported():
    run = run_app({**CONSOLE, "OTEL_LOGS_EXPORTER": "console"})
    span = run.server_span("tools/call audited_refund")
    (record,) = [r for r in run.log_records() if r["body"] == "refund audited"]
    assert record["trace_id"] == span["context"]["trace_id"]
    assert record["span_id"] in {s["context"]["span_id"] for s in run.spans()}


def test_providers_the_application_set_are_used_not_replaced():
    run = run_app(CONSOLE, "own-providers")
    assert run.result["ok"] and run.result["kept_own"]
    assert not run.spans(), "mcpobs exported through providers of its own"


def test_sdk_disabled_configures_nothing_and_the_call_still_works():
    run = run_app({**CONSOLE, "OTEL_SDK_DISABLED": "true"})
    assert run.result["ok"]
    assert run.result["tracer_provider"] == "opentelemetry.trace.ProxyTracerProvider"
    assert not run.exported


def test_none_exporters_set_providers_that_export_nothing():
    run = run_app({"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"})
    assert run.result["ok"]
    assert run.result["tracer_provider"] == "opentelemetry.sdk.trace.TracerProvider"
    assert not run.exported and not run.log_lines


def test_unknown_exporter_is_one_log_line_naming_the_variable_and_the_app_runs_on():
    run = run_app({"OTEL_TRACES_EXPORTER": "jaeger", "OTEL_METRICS_EXPORTER": "console"})
    assert run.result["ok"]
    (line,) = run.log_lines
    assert "OTEL_TRACES_EXPORTER='jaeger'" in line and "use one of: console" in line
    assert "mcp.server.operation.duration" in run.metric_names()  # the other signal is unaffected


def test_endpoint_that_is_not_a_url_is_one_line_per_signal_with_the_fix():
    run = run_app({"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"})
    assert run.result["ok"]
    assert len(run.log_lines) == 2
    for line in run.log_lines:
        assert "OTEL_EXPORTER_OTLP_ENDPOINT='localhost:4318' is not a URL" in line
        assert "http://localhost:4318" in line


def test_bad_metric_interval_falls_back_to_the_default_with_one_line():
    run = run_app({**CONSOLE, "OTEL_METRIC_EXPORT_INTERVAL": "soon"})
    assert run.result["ok"]
    (line,) = run.log_lines
    assert "OTEL_METRIC_EXPORT_INTERVAL='soon'" in line


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "OTEL_EXPORTER_OTLP_PROTOCOL='http/json' is not an OTLP"),
        (
            {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"},
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL='grpc' needs opentelemetry-exporter-otlp-proto-grpc",
        ),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "4318"}, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT='4318' is not a URL"),
    ],
)
def test_otlp_mistakes_name_the_variable(env, message):
    with pytest.raises(_autoconfig.Misconfigured, match=message.replace("(", r"\(").replace(")", r"\)")):
        _autoconfig.exporter_classes("traces", env)


def test_otlp_defaults_to_http_protobuf_which_prometheus_accepts():
    ((name, cls),) = _autoconfig.exporter_classes("metrics", {})
    assert name == "otlp"
    assert cls.__module__ == "opentelemetry.exporter.otlp.proto.http.metric_exporter"
    assert _autoconfig.exporter_classes("logs", {}) == []  # logs stay opt-in
