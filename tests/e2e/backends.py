"""Real Jaeger v2 and Prometheus v3 processes on free loopback ports, for the end-to-end tests.

The binaries come from `scripts/build-backends` (Go, from the module proxy) in
``$MCPOBS_BACKENDS_BIN`` (default ``~/.cache/mcpobs/bin``). Without them the tests skip
with instructions, except under ``CI=true``, where a missing backend is a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from processes import free_port, start, stop

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
BIN = Path(os.environ.get("MCPOBS_BACKENDS_BIN", Path.home() / ".cache" / "mcpobs" / "bin"))


def _built(names: tuple[str, ...], what: str) -> list[Path]:
    """The binaries `names` in BIN; skips (fails under CI=true) naming what is missing and how to build it."""
    paths = [BIN / name for name in names]
    missing = [p.name for p in paths if not os.access(p, os.X_OK)]
    if missing:
        message = (
            f"{' and '.join(missing)} not found in {BIN}: run scripts/build-backends (needs Go; builds {what} "
            f"from the Go module proxy), or set MCPOBS_BACKENDS_BIN to a directory holding "
            f"{'them' if len(names) > 1 else 'it'}."
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return paths


def binaries() -> tuple[Path, Path]:
    """Paths of jaeger and prometheus."""
    jaeger, prometheus = _built(("jaeger", "prometheus"), "Jaeger v1.76.0 and Prometheus v0.316.0")
    return jaeger, prometheus


def prometheus_binary() -> Path:
    """The prometheus binary alone, for tests that need no Jaeger."""
    (prometheus,) = _built(("prometheus",), "Prometheus v0.316.0")
    return prometheus


COLLECTOR = "mcpobs-otelcol"
"""The routing collector scripts/build-backends builds from deploy/collector/builder.yaml."""


def collector_binary() -> Path:
    """The routing collector."""
    (collector,) = _built((COLLECTOR,), "the OpenTelemetry Collector of deploy/collector/builder.yaml")
    return collector


def get(url: str, params: dict[str, Any] | None = None, timeout: float = 10) -> tuple[int, bytes]:
    """GET a loopback URL; (status, body), with connection failures as status 0."""
    if params:
        url += "?" + urllib.parse.urlencode(params)
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except OSError:
        return 0, b""


@dataclass
class Backend:
    name: str
    url: str
    log: Path
    process: subprocess.Popen[bytes]

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""


@contextmanager
def run(name: str, cmd: list[str], ready_url: str, url: str, workdir: Path, env: dict[str, str]) -> Iterator[Backend]:
    """Start a backend, wait until `ready_url` answers 200, stop it afterwards."""
    log = workdir / f"{name}.log"
    with log.open("wb") as out:
        process = start(cmd, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **env}, cwd=workdir)
    backend = Backend(name, url, log, process)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited with {process.returncode}:\n{backend.log_tail()}")
            if get(ready_url, timeout=1)[0] == 200:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} not ready at {ready_url} after 60s:\n{backend.log_tail()}")
            time.sleep(0.2)
        yield backend
    finally:
        stop(process, grace=15)


JAEGER_PORTS = {
    "otlp_http": "JAEGER_OTLP_HTTP",
    "otlp_grpc": "JAEGER_OTLP_GRPC",
    "query": "JAEGER_QUERY_HTTP",
    "query_grpc": "JAEGER_QUERY_GRPC",
    "health": "JAEGER_HEALTH",
}
"""Jaeger's ports, each with the variable deploy/jaeger.yaml reads it from."""


@contextmanager
def jaeger(
    workdir: Path,
    ports: dict[str, int],
    name: str = "jaeger",
    layers: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> Iterator[Backend]:
    """Jaeger all-in-one (in-memory) on the given loopback ports: start it again on the same ones after a kill.

    `layers`: more files from deploy/ merged over jaeger.yaml (e.g. tail-sampling.yaml), with `env`.
    """
    env = {**(env or {}), **{var: f"127.0.0.1:{ports[key]}" for key, var in JAEGER_PORTS.items()}}
    cmd = [str(binaries()[0]), "--config", str(DEPLOY / "jaeger.yaml")]
    for layer in layers:
        cmd += ["--config", str(DEPLOY / layer)]
    ready = f"http://127.0.0.1:{ports['health']}/status"
    with run(name, cmd, ready, f"http://127.0.0.1:{ports['query']}", workdir, env) as backend:
        yield backend


@dataclass
class Stack:
    jaeger: Backend
    prometheus: Backend
    otlp_traces: str
    otlp_metrics: str


@contextmanager
def stack(workdir: Path, layers: tuple[str, ...] = (), env: dict[str, str] | None = None) -> Iterator[Stack]:
    """Jaeger all-in-one (in-memory) and Prometheus with its OTLP receiver, on free ports.

    `layers` and `env` configure Jaeger's collector pipeline (see `jaeger`).
    """
    _, prometheus_bin = binaries()
    ports = {k: free_port() for k in ("otlp_http", "otlp_grpc", "query", "query_grpc", "health", "prom")}
    prom_url = f"http://127.0.0.1:{ports['prom']}"
    (workdir / "prometheus-data").mkdir(exist_ok=True)
    prometheus_cmd = [
        str(prometheus_bin),
        f"--config.file={DEPLOY / 'prometheus.yml'}",
        f"--storage.tsdb.path={workdir / 'prometheus-data'}",
        f"--web.listen-address=127.0.0.1:{ports['prom']}",
        "--web.enable-otlp-receiver",
        "--enable-feature=exemplar-storage",
    ]
    with (
        jaeger(workdir, ports, layers=layers, env=env) as jaeger_backend,
        run("prometheus", prometheus_cmd, f"{prom_url}/-/ready", prom_url, workdir, {}) as prometheus,
    ):
        yield Stack(
            jaeger_backend,
            prometheus,
            otlp_traces=f"http://127.0.0.1:{ports['otlp_http']}/v1/traces",
            otlp_metrics=f"{prom_url}/api/v1/otlp/v1/metrics",
        )


def promql(prom_url: str, expr: str, at: float | None = None) -> list[dict[str, Any]]:
    """An instant query; the result vector (or matrix) as Prometheus returns it."""
    params: dict[str, Any] = {"query": expr}
    if at is not None:
        params["time"] = at
    _, raw = get(f"{prom_url}/api/v1/query", params)
    body = json.loads(raw or b"{}")
    assert body.get("status") == "success", f"{expr!r}: {body}"
    return body["data"]["result"]
