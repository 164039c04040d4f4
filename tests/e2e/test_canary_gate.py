"""A rolling deploy seen from metrics, on the real Prometheus.

Six replicas export OTLP metrics to Prometheus (serve_release.py): ``stock`` 1.0.0 and 2.0.0
(2.0.0 renames an output field: breaking for a client holding 1.0.0's schema), ``pricing``
1.0.0 and 1.1.0 (a rewritten description: compatible, but a catalog twice the size) and ``orders`` 1.0.0 and 1.2.0 (same
contract, but 1.2.0's tool fails). Two hosts (rollout_hosts.py) call whatever replicas the
"load balancer" file lists; the old one keeps the catalog it cached from 1.0.0. At first only
the 1.0.0 replicas are listed; then the new releases join as canaries, taking half the
traffic. The canary gate (deploy/canary-rules.yml's expressions, with a short window and
``for:``) must fire for stock 2.0.0 (validation, stale catalogs) and orders 1.2.0 (error
ratio), naming each, for pricing 1.1.0 only its catalog growth, and never for a 1.0.0; the rollout
dashboard's queries must return the compatibility matrix and each release's catalog size.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
from backends import DEPLOY, get, prometheus_binary, promql, run
from processes import free_port, start, stop, wait_for_port
from test_dashboards import committed

from mcpobs import semconv as S
from mcpobs._cli import canary

pytestmark = pytest.mark.e2e

HERE = Path(__file__).parent
WINDOW = "10s"
FOR = "2s"
RELEASE = S.prometheus_label(S.SERVER_VERSION)
CLIENT_VERSION = S.prometheus_label(S.CLIENT_VERSION)
CATALOG = S.prometheus_label(S.CATALOG_RELEASE)
REQUESTS = S.prometheus_name(S.SERVER_REQUESTS)
NEW = {"stock": "2.0.0", "pricing": "1.1.0", "orders": "1.2.0"}
REPLICAS = {(service, version) for service, new in NEW.items() for version in ("1.0.0", new)}


def gate_config(workdir: Path) -> Path:
    """The committed deploy/prometheus.yml, evaluating every second, loading the gate with a short window."""
    rules = workdir / "canary-rules.yml"
    rules.write_text(canary.render(window=WINDOW, for_=FOR))
    committed_config = (DEPLOY / "prometheus.yml").read_text()
    changes = {
        "evaluation_interval: 15s": "evaluation_interval: 1s",
        "rule_files: [canary-rules.yml]": f"rule_files: [{rules}]",
    }
    text = committed_config
    for old, new in changes.items():
        assert text.count(old) == 1, f"deploy/prometheus.yml no longer says {old!r}"
        text = text.replace(old, new)
    config = workdir / "prometheus.yml"
    config.write_text(text)
    return config


@contextmanager
def prometheus(workdir: Path, config: Path) -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    data = workdir / f"prometheus-data-{port}"
    data.mkdir()
    cmd = [
        str(prometheus_binary()),
        f"--config.file={config}",
        f"--storage.tsdb.path={data}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--web.enable-otlp-receiver",
    ]
    with run("prometheus", cmd, f"{url}/-/ready", url, workdir, {}) as backend:
        yield backend.url


def otel_env(prom_url: str, service: str, instance: str) -> dict[str, str]:
    """Standard variables only; one instance id per process, so replicas of one service never share a series."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return {
        **env,
        # the tests' helpers, then wherever this process found mcpobs (a worktree's src/ before an editable install)
        "PYTHONPATH": os.pathsep.join(filter(None, (str(HERE.parent), os.environ.get("PYTHONPATH")))),
        "OTEL_SERVICE_NAME": service,
        "OTEL_RESOURCE_ATTRIBUTES": f"service.instance.id={instance}",
        "OTEL_TRACES_EXPORTER": "none",  # this test reads metrics only
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": f"{prom_url}/api/v1/otlp/v1/metrics",
        "OTEL_METRIC_EXPORT_INTERVAL": "1000",
    }


def spawn(stack: ExitStack, cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        process = start(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)  # a process group of its own
    stack.callback(stop, process, 15)  # SIGTERM first: mcpobs flushes before the process dies of it
    return process


def alerts(prom_url: str) -> list[dict[str, Any]]:
    status, body = get(f"{prom_url}/api/v1/alerts")
    assert status == 200, body[:300]
    return json.loads(body)["data"]["alerts"]


def as_grafana_would_send(expr: str) -> str:
    for variable, value in {"$service": ".*", "$client": ".*", "$tool": ".*", "$__rate_interval": WINDOW}.items():
        expr = expr.replace(variable, value)
    return expr


def test_the_gate_fires_for_a_breaking_release_naming_it_and_not_for_a_compatible_one(tmp_path, record_property):
    with ExitStack() as stack:
        prom = stack.enter_context(prometheus(tmp_path, gate_config(tmp_path)))
        urls: dict[tuple[str, str], str] = {}
        for service, version in sorted(REPLICAS):
            port = free_port()
            process = spawn(
                stack,
                [sys.executable, str(HERE / "serve_release.py"), service, version, str(port)],
                otel_env(prom, service, f"{service}-{version}"),
                tmp_path / f"{service}-{version}.log",
            )
            urls[service, version] = f"http://127.0.0.1:{port}/mcp"
            wait_for_port(port, process, f"{service} {version}", timeout=30)
        balancer = tmp_path / "replicas.json"
        balancer.write_text(json.dumps({s: [urls[s, "1.0.0"]] for s in NEW}))
        hosts = spawn(
            stack,
            [sys.executable, str(HERE / "rollout_hosts.py"), str(balancer)],
            otel_env(prom, "support-host", "host-1"),
            tmp_path / "hosts.log",
        )

        # Before the deploy: the old releases serve everything, long enough for a rate over the window.
        baseline = f'sum(rate({REQUESTS}{{{RELEASE}="1.0.0"}}[{WINDOW}]))'
        deadline = time.monotonic() + 60
        while not [r for r in promql(prom, baseline) if float(r["value"][1]) > 0]:
            assert hosts.poll() is None, (tmp_path / "hosts.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "no traffic from the hosts reached Prometheus"
            time.sleep(0.5)
        time.sleep(3)
        assert alerts(prom) == []  # one release per service: nothing to compare, nothing fires

        # The rollout: each new release takes half its service's traffic.
        balancer.write_text(json.dumps({s: [urls[s, "1.0.0"], urls[s, new]] for s, new in NEW.items()}))
        deployed = time.time()

        wanted = {r.alert for r in canary.rules()}
        fired: dict[str, float] = {}
        seen: list[dict[str, Any]] = []
        deadline = time.monotonic() + 90
        quiet_until = None
        while quiet_until is None or time.monotonic() < quiet_until:
            assert time.monotonic() < deadline, f"the gate did not fire for stock 2.0.0; alerts seen: {seen}"
            assert hosts.poll() is None, (tmp_path / "hosts.log").read_text()[-2000:]
            for alert in alerts(prom):
                seen.append(alert["labels"])
                name = alert["labels"]["alertname"]
                if alert["state"] == "firing" and name not in fired:
                    fired[name] = time.time() - deployed
            if quiet_until is None and wanted <= set(fired):
                quiet_until = time.monotonic() + 8  # the compatible release keeps serving, in the window
            time.sleep(0.25)

        releases = {(a["alertname"], a.get(RELEASE), a.get("release")) for a in seen}
        assert releases == {
            ("MCPReleaseBreaksClientValidation", "2.0.0", "2.0.0"),
            ("MCPReleaseStaleCatalogs", "2.0.0", "2.0.0"),
            ("MCPReleaseErrorRatio", "1.2.0", "1.2.0"),
            ("MCPReleaseCatalogGrowth", "1.1.0", "1.1.0"),
        }, releases  # the bad releases, named; pricing 1.1.0 only for its catalog, never a 1.0.0
        assert {a.get("job") for a in seen if a["alertname"] == "MCPReleaseStaleCatalogs"} == {"stock"}
        assert {a.get("job") for a in seen if a["alertname"] == "MCPReleaseErrorRatio"} == {"orders"}
        assert {a.get("job") for a in seen if a["alertname"] == "MCPReleaseCatalogGrowth"} == {"pricing"}
        assert {a.get(S.prometheus_label(S.GEN_AI_TOOL_NAME)) for a in seen if "job" not in a} == {"check_stock"}
        compatible = f'sum(rate({REQUESTS}{{job="pricing", {RELEASE}="1.1.0"}}[{WINDOW}]))'
        assert float(promql(prom, compatible)[0]["value"][1]) > 0  # it did serve while the gate watched

        # The rollout dashboard, as Grafana would ask.
        dashboard = committed()["mcpobs-rollout.json"]
        answers: dict[str, list[dict[str, Any]]] = {}
        for panel in dashboard["panels"]:
            for target in panel.get("targets", ()):
                rows = promql(prom, as_grafana_would_send(target["expr"]))
                assert rows, f"{panel['title']}: no data for {target['expr']}"
                answers[panel["title"]] = rows
        matrix = {
            (r["metric"][CLIENT_VERSION], r["metric"][RELEASE]): round(float(r["value"][1]), 3)
            for r in answers["Compatibility matrix: client version x server release"]
        }
        assert matrix == {
            ("1.4.0", "1.0.0"): 0.0,
            ("1.4.0", "2.0.0"): 1.0,  # the old host's cached 1.0.0 schema against 2.0.0's results
            ("1.4.0", "1.1.0"): 0.0,
            ("1.4.0", "1.2.0"): 0.0,  # failing calls, but no result was rejected against a schema
            ("2.1.0", "1.0.0"): 0.0,
            ("2.1.0", "2.0.0"): 0.0,
            ("2.1.0", "1.1.0"): 0.0,
            ("2.1.0", "1.2.0"): 0.0,
        }, matrix
        catalogs = {
            (r["metric"][CATALOG], r["metric"][RELEASE]) for r in answers["Calls by catalog release x server release"]
        }
        assert ("1.0.0", "2.0.0") in catalogs and ("2.0.0", "2.0.0") in catalogs
        sizes = {
            (r["metric"]["job"], r["metric"][RELEASE]): float(r["value"][1])
            for r in answers["Tool catalog size per release (tokens)"]
        }
        assert sizes[("pricing", "1.1.0")] > 1.25 * sizes[("pricing", "1.0.0")], sizes
        assert sizes[("stock", "2.0.0")] == sizes[("stock", "1.0.0")], sizes  # an output schema is not shown

        summary = {
            "fired_after_s": {k: round(v, 1) for k, v in fired.items()},
            "matrix": {f"{c} x {s}": v for (c, s), v in sorted(matrix.items())},
        }
        record_property("rollout", json.dumps(summary))
        print(f"\nrollout: {json.dumps(summary)}", file=sys.stderr)
        assert max(fired.values()) < 60


def test_the_committed_gate_loads_in_the_committed_prometheus_config(tmp_path):
    """What scripts/stack starts (deploy/prometheus.yml, as committed) loads every rule of deploy/canary-rules.yml."""
    with prometheus(tmp_path, DEPLOY / "prometheus.yml") as prom:
        status, body = get(f"{prom}/api/v1/rules")
        assert status == 200, body[:300]
        (group,) = json.loads(body)["data"]["groups"]
        loaded = {r["name"]: r for r in group["rules"]}
    assert set(loaded) == {r.alert for r in canary.rules()}
    for rule in loaded.values():
        assert rule["type"] == "alerting" and rule["duration"] == 300 and rule["health"] != "err"
        assert rule["labels"]["release"] == f"{{{{ $labels.{RELEASE} }}}}"
