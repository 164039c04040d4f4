"""A stdio server the host spawns gets the host's OpenTelemetry settings only through `otel_env()`.

Real subprocesses over stdio: the host (this test) configures the console trace exporter
with OTEL_* variables; the server's spans reach that exporter (its stderr) when the host
passes `env=mcpobs.otel_env()`, and do not with the SDK's default filtered environment. The
OTLP headers, which hold credentials, are not passed unless asked. With
`otel_env(service_name=...)` the server exports under its own service name: a host and its
server, both real processes, export to a real OTLP receiver on loopback, and each span and
metric point arrives under the name of the process that made it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from exiting import environment
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from otlp_receiver import OtlpReceiver

import mcpobs
from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

SERVER = """
import os
from mcp.server.mcpserver import MCPServer
import mcpobs

mcpobs.instrument()
server = MCPServer("stdio-env")


@server.tool()
def otel_settings() -> str:
    return " ".join(sorted(name for name in os.environ if name.startswith("OTEL_")))


server.run("stdio")
"""
HOST = {
    "OTEL_SERVICE_NAME": "stdio-env-host",
    "OTEL_TRACES_EXPORTER": "console",
    "OTEL_METRICS_EXPORTER": "none",
    "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer not-for-children",
}


def console_spans(stderr: str) -> list[dict]:
    return [json.loads(line) for line in stderr.splitlines() if line.startswith('{"name": ')]


async def spawn(tmp_path: Path, env: dict[str, str] | None) -> tuple[str, list[dict]]:
    """Start the server as a host would; what its tool saw, and the spans on its stderr."""
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    errlog = tmp_path / f"stderr-{env is not None}.txt"
    params = StdioServerParameters(command=sys.executable, args=[str(script)], env=env)
    with errlog.open("w") as err:
        async with Client(stdio_client(params, errlog=err)) as client:
            result = await client.call_tool("otel_settings", {})
    return result.content[0].text, console_spans(errlog.read_text())  # type: ignore[union-attr]


def test_only_otel_variables_without_credentials_unless_asked():
    environ = {"OTEL_SERVICE_NAME": "s", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "k=v", "AWS_SECRET_ACCESS_KEY": "x"}
    assert mcpobs.otel_env(environ=environ) == {"OTEL_SERVICE_NAME": "s"}
    assert mcpobs.otel_env(headers=True, environ=environ) == {
        "OTEL_SERVICE_NAME": "s",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "k=v",
    }


async def test_the_spawned_servers_spans_reach_the_hosts_exporter_with_otel_env(tmp_path, monkeypatch):
    for name, value in HOST.items():
        monkeypatch.setenv(name, value)

    seen, spans = await spawn(tmp_path, env=mcpobs.otel_env())
    assert seen.split() == ["OTEL_METRICS_EXPORTER", "OTEL_SERVICE_NAME", "OTEL_TRACES_EXPORTER"]
    calls = [s for s in spans if s["name"] == "tools/call otel_settings"]
    assert len(calls) == 1 and calls[0]["resource"]["attributes"]["service.name"] == "stdio-env-host"

    seen, spans = await spawn(tmp_path, env=None)  # the SDK's default: the host's settings are not passed
    assert seen == "" and spans == []


def test_service_name_names_the_server_and_leaves_the_rest():
    environ = {
        "OTEL_SERVICE_NAME": "host",
        "OTEL_RESOURCE_ATTRIBUTES": "service.name=host, deployment.environment.name=ci,service.namespace=shop",
        "OTEL_EXPORTER_OTLP_HEADERS": "k=v",
        "HOME": "/root",
    }
    assert mcpobs.otel_env(service_name="shop-stdio", environ=environ) == {
        "OTEL_SERVICE_NAME": "shop-stdio",
        "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=ci,service.namespace=shop",
    }
    named_in_attributes_only = {"OTEL_RESOURCE_ATTRIBUTES": "service.name=host"}
    assert mcpobs.otel_env(service_name="shop-stdio", environ=named_in_attributes_only) == {
        "OTEL_SERVICE_NAME": "shop-stdio"
    }
    assert mcpobs.otel_env(environ=environ)["OTEL_SERVICE_NAME"] == "host"  # left out: the host's, as before
    for bad in ("", "  ", 42):
        with pytest.raises(
            mcpobs.ConfigurationError, match=r"otel_env\(service_name=.*e\.g\. otel_env\(service_name='shop'\)"
        ):
            mcpobs.otel_env(service_name=bad)  # type: ignore[arg-type]


HOST_PROGRAM = """
import sys

import anyio
from mcp import Client, StdioServerParameters

import mcpobs

mcpobs.instrument()


async def main():
    server = StdioServerParameters(
        command=sys.executable, args=[sys.argv[1]], env=mcpobs.otel_env(service_name="shop-stdio")
    )
    async with Client(server) as client:
        await client.call_tool("otel_settings", {})


anyio.run(main)
"""


def by_service(exports: list[tuple[str, bytes]]) -> tuple[dict[tuple[str, int], set[str]], dict[str, set[str]]]:
    """What arrived, by the service.name of the resource it came with: span (name, kind) and metric names."""
    spans: dict[tuple[str, int], set[str]] = defaultdict(set)
    metrics: dict[str, set[str]] = defaultdict(set)
    for path, body in exports:
        traces = ExportTraceServiceRequest()
        exported = ExportMetricsServiceRequest()
        (traces if path.endswith("/v1/traces") else exported).ParseFromString(body)
        for r in traces.resource_spans:
            service = {kv.key: kv.value.string_value for kv in r.resource.attributes}["service.name"]
            for scope in r.scope_spans:
                for span in scope.spans:
                    spans[(span.name, span.kind)].add(service)
        for r in exported.resource_metrics:
            service = {kv.key: kv.value.string_value for kv in r.resource.attributes}["service.name"]
            for scope in r.scope_metrics:
                for metric in scope.metrics:
                    metrics[metric.name].add(service)
    return spans, metrics


@pytest.mark.parametrize(
    "host_names_itself",
    [{"OTEL_SERVICE_NAME": "support-host"}, {"OTEL_RESOURCE_ATTRIBUTES": "service.name=support-host,team=a"}],
    ids=["OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"],
)
def test_a_server_given_its_own_service_name_exports_under_it(tmp_path, host_names_itself):
    """Host and server as real processes, exporting OTLP to a receiver on loopback: each under its own name."""
    (tmp_path / "server.py").write_text(SERVER)
    (tmp_path / "host.py").write_text(HOST_PROGRAM)
    receiver, exports = OtlpReceiver(), []
    received = receiver._received
    receiver._received = lambda path, body: (exports.append((path, body)), received(path, body))  # type: ignore[method-assign]
    with receiver.running():
        env = environment(OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.port}", **host_names_itself)
        done = subprocess.run(
            [sys.executable, str(tmp_path / "host.py"), str(tmp_path / "server.py")],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr[-3000:]
    spans, metrics = by_service(exports)  # both flushed at exit: the server when its stdin closed
    client, server = 3, 2  # OTLP span kinds
    assert spans[("tools/call otel_settings", client)] == {"support-host"}, dict(spans)
    assert spans[("tools/call otel_settings", server)] == {"shop-stdio"}, dict(spans)
    assert metrics[S.CLIENT_OPERATION_DURATION.name] == {"support-host"}, dict(metrics)
    assert metrics[S.SERVER_OPERATION_DURATION.name] == {"shop-stdio"}, dict(metrics)
    assert metrics[S.SERVER_REQUESTS.name] == {"shop-stdio"}, dict(metrics)
