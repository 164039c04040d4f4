"""Every example in examples/ run the way its docstring says, as a user would.

Each runs in a subprocess; servers listen on a free loopback port (or speak stdio) and are
called with the SDK's `Client`. The assertions read what the example prints, and the spans
the console exporter writes to stderr (one JSON object per line) when configured only
through the standard OTEL_* variables. One end-to-end test (marked e2e) follows the README
to the letter: `scripts/stack`, its printed exports, the shop, and the data in Jaeger and
Prometheus.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from processes import free_port, interrupt, sigint_ignored, start

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples"
BACKENDS = Path(os.environ.get("MCPOBS_BACKENDS_BIN", Path.home() / ".cache" / "mcpobs" / "bin"))
CONSOLE = {"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"}


def environment(**settings: str) -> dict[str, str]:
    """This environment without any OTEL_* of the caller's, plus `settings`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return {**env, "PYTHONUNBUFFERED": "1", **settings}


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        args, cwd=EXAMPLES.parent, env=env or environment(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def console_spans(stderr: str) -> list[dict[str, Any]]:
    """Spans the console exporter wrote, one JSON object per line, among other stderr lines."""
    return [json.loads(line) for line in stderr.splitlines() if line.startswith('{"name": ')]


def calls(spans: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(name, outcome) of each SERVER tools/call span, in the order they ended."""
    return [
        (s["name"], s["attributes"][S.OUTCOME])
        for s in spans
        if s["kind"] == "SpanKind.SERVER" and s["name"].startswith("tools/call")
    ]


class Served:
    """What a server process printed, read after it stopped."""

    stdout = ""
    stderr = ""


@contextmanager
def serving(command: list[str], port: int, env: dict[str, str], tmp_path: Path) -> Iterator[Served]:
    """Run a server until the block ends, then stop it with Ctrl-C (SIGINT), as a user would."""
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    served = Served()
    with out.open("w") as stdout, err.open("w") as stderr:
        process = start(command, cwd=EXAMPLES.parent, env=env, stdout=stdout, stderr=stderr)
    try:
        deadline = time.monotonic() + 15
        while True:
            assert process.poll() is None, f"server exited early: {err.read_text()}"
            assert time.monotonic() < deadline, f"server did not listen on {port}: {err.read_text()}"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield served
    finally:
        interrupt(process)
        served.stdout, served.stderr = out.read_text(), err.read_text()


async def test_shop_http_serves_the_shop_and_exports_as_the_otel_variables_say(tmp_path):
    port = free_port()
    env = environment(**{**CONSOLE, "OTEL_METRICS_EXPORTER": "console", "OTEL_SERVICE_NAME": "shop-example"})
    command = [sys.executable, "examples/shop_http.py", "--port", str(port)]
    # SIGINT ignored, as in a shell's background job (`pytest ... &`): the Ctrl-C sent to the shop still stops it
    with sigint_ignored(), serving(command, port, env, tmp_path) as served:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            assert not (await client.call_tool("get_order_status", {"order_id": "O-1873"})).is_error
            assert (await client.call_tool("get_order_status", {"order_id": "O-404"})).is_error
            assert (await client.call_tool("quote_refund", {"order_id": "O-1", "amount_cents": -5})).is_error

    assert f"shop: serving MCP on http://127.0.0.1:{port}/mcp" in served.stdout
    assert "OTEL_SERVICE_NAME=shop-example" in served.stdout
    assert served.stdout.rstrip().endswith("shop: stopped")  # Ctrl-C is a clean stop
    spans = console_spans(served.stderr)
    assert calls(spans) == [
        ("tools/call get_order_status", "ok"),
        ("tools/call get_order_status", "tool_error"),
        ("tools/call quote_refund", "server_error"),
    ]
    assert {s["resource"]["attributes"]["service.name"] for s in spans} == {"shop-example"}
    # the metrics reader flushed at exit, too
    assert S.SERVER_REQUESTS.name in served.stderr and S.SERVER_OPERATION_DURATION.name in served.stderr


def test_stdio_server_played_as_a_host_prints_the_results_and_the_spans_go_to_stderr():
    done = run(sys.executable, "examples/stdio_server.py", "--host")
    assert done.stdout.splitlines() == [
        'host: get_order_status({\'order_id\': \'O-1873\'}) -> {   "order_id": "O-1873",   "status": "delivered" }',
        "host: get_order_status({'order_id': 'O-404'}) -> error: Error executing tool get_order_status: "
        "Unknown order O-404; ask the customer for the order number.",
        "host: check_stock({'sku': 'KG-1031'}) -> 12",
    ]
    spans = console_spans(done.stderr)  # the server's stderr is the host's
    assert calls(spans) == [
        ("tools/call get_order_status", "ok"),
        ("tools/call get_order_status", "tool_error"),
        ("tools/call check_stock", "ok"),
    ]
    assert {s["attributes"][S.NETWORK_TRANSPORT] for s in spans if s["kind"] == "SpanKind.SERVER"} == {"pipe"}


async def test_stdio_server_writes_nothing_but_json_rpc_to_stdout(tmp_path):
    wire, stderr = tmp_path / "wire.jsonl", tmp_path / "stderr.txt"
    # Launched as a host would, with `tee` recording every byte the server writes to stdout.
    tap = StdioServerParameters(
        command="sh",
        args=["-c", '"$0" "$1" 2>"$2" | tee "$3"', sys.executable, "examples/stdio_server.py", str(stderr), str(wire)],
        env=environment(**CONSOLE),
        cwd=str(EXAMPLES.parent),
    )
    async with Client(tap) as client:
        assert not (await client.call_tool("check_stock", {"sku": "KG-2040"})).is_error
        assert (await client.call_tool("quote_refund", {"order_id": "O-1", "amount_cents": -5})).is_error
    lines = wire.read_text().splitlines()
    assert len(lines) >= 3
    for line in lines:  # raises on anything that is not one JSON-RPC message
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    spans = console_spans(stderr.read_text())
    assert calls(spans) == [("tools/call check_stock", "ok"), ("tools/call quote_refund", "server_error")]


def test_long_export_shows_each_progress_span_while_the_call_still_runs():
    done = run(sys.executable, "examples/long_export.py")
    ended = [line.split() for line in done.stdout.splitlines() if line.startswith("+")]
    progress = [float(words[0].strip("+s")) for words in ended if words[1:3] == ["INTERNAL", S.PROGRESS_SPAN]]
    (call_end,) = [float(w[0].strip("+s")) for w in ended if w[1:4] == ["SERVER", "tools/call", "export_orders"]]
    assert len(progress) == 5
    # exported one by one, about 0.3 s apart, the first over a second before the call ends
    assert progress == sorted(progress) and progress[-1] - progress[0] >= 1.0
    assert call_end - progress[0] >= 1.0
    assert "100% 'batch 5 of 5 written'" in done.stdout
    assert done.stdout.splitlines()[-1] == "result: exported 5 batches"


def test_elicitation_shows_a_pending_round_then_the_final_round():
    done = run(sys.executable, "examples/elicitation.py")
    assert done.stdout.splitlines() == [
        "span tools/call cancel_order: mcpobs.mrtr.round=1  mcpobs.outcome=pending_input"
        "  mcpobs.mrtr.input_methods=['elicitation/create']",
        "user is asked: 'Cancel order O-2001? This cannot be undone.' -> yes",
        "span tools/call cancel_order: mcpobs.mrtr.round=2  mcpobs.outcome=ok  (linked to the round before)",
        "result: O-2001 cancelled",
    ]


def test_subscriptions_through_a_custom_bus_show_publish_and_linked_delivery():
    done = run(sys.executable, "examples/subscriptions.py")
    lines = done.stdout.splitlines()
    assert "span PRODUCER publish resource_updated  (child of SERVER tools/call restock)" in lines
    assert "client heard: ResourceUpdated(uri='shop://stock/KG-2040')" in lines
    assert (
        "span CONSUMER deliver resource_updated  (child of SERVER subscriptions/listen)"
        "  (linked to PRODUCER publish resource_updated)"
    ) in lines


def test_the_fixture_example_runs_under_pytest():
    done = run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "examples/test_with_fixtures.py")
    assert "3 passed" in done.stdout


async def test_zero_code_server_is_instrumented_by_opentelemetry_instrument(tmp_path):
    script = EXAMPLES / "zero_code" / "server.py"
    assert "import mcpobs" not in script.read_text()
    port = free_port()
    instrument = str(Path(sys.executable).parent / "opentelemetry-instrument")
    command = [instrument, "--traces_exporter", "console", "--metrics_exporter", "none"]
    command += [sys.executable, str(script), "--port", str(port)]
    with serving(command, port, environment(OTEL_LOGS_EXPORTER="none"), tmp_path) as served:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            assert not (await client.call_tool("get_order_status", {"order_id": "O-2001"})).is_error
            assert (await client.call_tool("get_order_status", {"order_id": "O-404"})).is_error
    assert calls(console_spans(served.stderr)) == [
        ("tools/call get_order_status", "ok"),
        ("tools/call get_order_status", "tool_error"),
    ]


@dataclass
class StackRun:
    """`scripts/stack` as the test ran it: what it printed to export, and what it left when stopped."""

    exports: dict[str, str] = field(default_factory=dict)
    folder: Path | None = None  # the temporary folder it said it keeps its logs and data in
    left_running: bool = False  # a process of its group (Jaeger, Prometheus) outlived it


@contextmanager
def stack_running(tmp_path: Path) -> Iterator[StackRun]:
    """`scripts/stack` on free ports, stopped with Ctrl-C at the end (whatever our SIGINT is)."""
    if not all(os.access(BACKENDS / name, os.X_OK) for name in ("jaeger", "prometheus")):
        message = f"Jaeger and Prometheus are not built in {BACKENDS}: run scripts/build-backends"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    ports = {name: str(free_port()) for name in ("prom", "otlp", "grpc", "query", "query_grpc", "health")}
    env = {
        **environment(),
        "MCPOBS_BACKENDS_BIN": str(BACKENDS),
        "PROMETHEUS_LISTEN": f"127.0.0.1:{ports['prom']}",
        "JAEGER_OTLP_HTTP": f"127.0.0.1:{ports['otlp']}",
        "JAEGER_OTLP_GRPC": f"127.0.0.1:{ports['grpc']}",
        "JAEGER_QUERY_HTTP": f"127.0.0.1:{ports['query']}",
        "JAEGER_QUERY_GRPC": f"127.0.0.1:{ports['query_grpc']}",
        "JAEGER_HEALTH": f"127.0.0.1:{ports['health']}",
        "TMPDIR": str(tmp_path),  # its mktemp folder, should it fail to remove it
    }
    log = tmp_path / "stack.log"
    with log.open("w") as stderr:
        stack = start([str(ROOT / "scripts" / "stack")], env=env, stdout=subprocess.PIPE, stderr=stderr, text=True)
    run = StackRun()
    try:
        assert stack.stdout is not None
        for line in stack.stdout:  # the export block ends with the metric interval
            if line.startswith("export "):
                key, _, value = line.removeprefix("export ").strip().partition("=")
                run.exports[key] = value
            if "OTEL_METRIC_EXPORT_INTERVAL" in run.exports:
                break
        assert run.exports, f"scripts/stack printed no exports: {log.read_text()}"
        run.exports["JAEGER"] = f"http://127.0.0.1:{ports['query']}"
        run.exports["PROMETHEUS"] = f"http://127.0.0.1:{ports['prom']}"
        yield run
    finally:
        # Ctrl-C: the script stops both backends and removes its folder; anything it left is killed
        run.left_running = interrupt(stack, grace=20)
        said = re.search(r"\(logs in (.+)\)", log.read_text())
        run.folder = Path(said[1]) if said else None


def get_json(url: str, **params: str) -> Any:
    with urllib.request.urlopen(url + "?" + urllib.parse.urlencode(params), timeout=10) as response:
        return json.loads(response.read())


def jaeger_calls(jaeger: str, service: str) -> list[tuple[str, str]]:
    """(name, outcome) of the service's tools/call spans in Jaeger, by start time."""
    now = time.time()
    window = {
        "query.start_time_min": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 600)),
        "query.start_time_max": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 60)),
    }
    try:
        body = get_json(
            f"{jaeger}/api/v3/traces", **{"query.service_name": service, "query.num_traces": "100", **window}
        )
    except OSError:  # 404 until the first trace lands
        return []
    spans = [
        span
        for resource_spans in body["result"]["resourceSpans"]
        for scope_spans in resource_spans["scopeSpans"]
        for span in scope_spans["spans"]
    ]
    found = []
    for span in sorted(spans, key=lambda s: int(s["startTimeUnixNano"])):
        attributes = {a["key"]: a["value"].get("stringValue") for a in span.get("attributes", ())}
        if span["name"].startswith("tools/call") and S.OUTCOME in attributes:
            found.append((span["name"], attributes[S.OUTCOME]))
    return found


@pytest.mark.e2e
async def test_shop_http_with_the_stack_exports_lands_in_jaeger_and_prometheus(tmp_path):
    # SIGINT ignored, as in a shell's background job: the Ctrl-C sent to the shop and the stack still stops them
    with sigint_ignored(), stack_running(tmp_path) as stack:
        exports = stack.exports
        service = exports["OTEL_SERVICE_NAME"]
        port = free_port()
        command = [sys.executable, "examples/shop_http.py", "--port", str(port)]
        with serving(command, port, environment(**exports), tmp_path):
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                await client.call_tool("get_order_status", {"order_id": "O-1873"})
                await client.call_tool("get_order_status", {"order_id": "O-404"})
        # stopped with Ctrl-C: everything was flushed on the way out
        wanted = [("tools/call get_order_status", "ok"), ("tools/call get_order_status", "tool_error")]
        deadline = time.monotonic() + 15
        while jaeger_calls(exports["JAEGER"], service) != wanted:
            assert time.monotonic() < deadline, jaeger_calls(exports["JAEGER"], service)
            time.sleep(0.3)
        requests = S.prometheus_name(S.SERVER_REQUESTS)
        query = f'sum by ({S.OUTCOME.replace(".", "_")}) ({requests}{{job="{service}"}})'
        deadline = time.monotonic() + 15
        while not (result := get_json(f"{exports['PROMETHEUS']}/api/v1/query", query=query)["data"]["result"]):
            assert time.monotonic() < deadline, f"no {requests} in Prometheus"
            time.sleep(0.3)
        by_outcome = {r["metric"].get(S.OUTCOME.replace(".", "_")): float(r["value"][1]) for r in result}
        assert by_outcome.get("tool_error") == 1
    assert not stack.left_running, "scripts/stack exited on Ctrl-C but left Jaeger or Prometheus running"
    assert stack.folder is not None and stack.folder.is_relative_to(tmp_path), stack.folder
    assert not stack.folder.exists(), f"scripts/stack left its temporary folder {stack.folder}"
