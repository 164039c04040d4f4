"""A stdio server the host spawns gets the host's OpenTelemetry settings only through `otel_env()`.

Real subprocesses over stdio: the host (this test) configures the console trace exporter
with OTEL_* variables; the server's spans reach that exporter (its stderr) when the host
passes `env=mcpobs.otel_env()`, and do not with the SDK's default filtered environment. The
OTLP headers, which hold credentials, are not passed unless asked.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

import mcpobs

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
