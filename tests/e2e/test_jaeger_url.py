"""The Jaeger URL the demo prints (and `python -m mcpobs jaeger-url` builds) answers with the demo's traces.

Real Jaeger v2 (built from its Go module) and Prometheus; the demo runs in a subprocess
configured only by the OTEL_* variables scripts/stack prints, as a newcomer would run it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from backends import get, stack

pytestmark = pytest.mark.e2e

SERVICE = "mcpobs-demo-url"


def test_the_printed_jaeger_url_finds_the_demos_traces(tmp_path: Path):
    with stack(tmp_path) as backends:
        query = backends.jaeger.url.removeprefix("http://")
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        env.update(
            OTEL_SERVICE_NAME=SERVICE,
            OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=backends.otlp_traces,
            OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=backends.otlp_metrics,
            JAEGER_QUERY_HTTP=query,
        )
        demo = subprocess.run(
            [sys.executable, "-m", "mcpobs", "demo"], env=env, capture_output=True, text=True, timeout=120
        )
        assert demo.returncode == 0, demo.stderr
        printed = [w for w in demo.stdout.split() if "/api/v3/traces?" in w]
        assert len(printed) == 1, demo.stdout
        url = printed[0]
        assert url.startswith(backends.jaeger.url)

        bare = f"{backends.jaeger.url}/api/v3/traces?query.service_name={SERVICE}"  # what the demo printed before
        assert get(bare)[0] >= 400

        deadline = time.monotonic() + 20
        while (answer := get(url))[0] != 200:
            assert time.monotonic() < deadline, answer
            time.sleep(0.3)
        names = {
            span["name"]
            for resource in json.loads(answer[1])["result"]["resourceSpans"]
            for scope in resource["scopeSpans"]
            for span in scope["spans"]
        }
        assert "tools/call get_order_status" in names

        one = subprocess.run(
            [sys.executable, "-m", "mcpobs", "jaeger-url", "--operation", "tools/call check_stock"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        status, body = get(one)
        assert status == 200, body
        spans = [
            span
            for resource in json.loads(body)["result"]["resourceSpans"]
            for scope in resource["scopeSpans"]
            for span in scope["spans"]
        ]
        assert any(span["name"] == "tools/call check_stock" for span in spans)


def _demo(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    demo = subprocess.run(
        [sys.executable, "-m", "mcpobs", "demo"], env={**clean, **env}, capture_output=True, text=True, timeout=120
    )
    assert demo.returncode == 0, demo.stderr
    return demo


def test_the_readmes_one_endpoint_with_the_stack_running_says_jaeger_refused_the_metrics(tmp_path: Path):
    """README: "With OTEL_EXPORTER_OTLP_ENDPOINT set it sends everything to that endpoint": Jaeger's port."""
    with stack(tmp_path) as backends:
        base = backends.otlp_traces.removesuffix("/v1/traces")
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_SERVICE_NAME": SERVICE}
        demo = _demo({**env, "JAEGER_QUERY_HTTP": backends.jaeger.url.removeprefix("http://")})
    lines = demo.stdout.splitlines()
    assert f"traces:  sent to {base}/v1/traces (OTEL_EXPORTER_OTLP_ENDPOINT)" in lines
    (metrics,) = [line for line in lines if line.startswith("metrics:")]
    assert metrics.startswith(
        f"metrics: not sent: refused by {base}/v1/metrics (from OTEL_EXPORTER_OTLP_ENDPOINT; HTTP 404"
    )
    assert "Set OTEL_EXPORTER_OTLP_METRICS_ENDPOINT" in metrics
    assert "Failed to export" not in demo.stderr, demo.stderr  # the SDK was never asked to send them there
    assert "Sent everything" not in demo.stdout and "Prometheus at" not in demo.stdout
    assert f"query.service_name={SERVICE}" in demo.stdout


def test_the_demo_points_at_the_backends_that_took_each_signal(tmp_path: Path):
    with stack(tmp_path) as backends:
        env = {
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": backends.otlp_traces,
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": backends.otlp_metrics,
        }
        unnamed = _demo(env)  # no OTEL_SERVICE_NAME: the SDK's unknown_service
        named = _demo({**env, "OTEL_RESOURCE_ATTRIBUTES": f"service.name={SERVICE}"})
    for demo in (unnamed, named):
        assert f"traces:  sent to {backends.otlp_traces} (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)" in demo.stdout
        assert f"metrics: sent to {backends.otlp_metrics} (OTEL_EXPORTER_OTLP_METRICS_ENDPOINT)" in demo.stdout
        assert f"Its metrics in Prometheus at {backends.prometheus.url}: try sum by" in demo.stdout
    assert "set OTEL_SERVICE_NAME" in unnamed.stdout and "/api/v3/traces" not in unnamed.stdout
    assert "unknown_service" not in named.stdout and f"query.service_name={SERVICE}" in named.stdout
