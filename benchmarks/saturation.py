"""What mcpobs costs a running service: throughput, latency, CPU and bytes at saturation, exporting.

Per mode and configuration, one server process serves a trivial `echo` tool while one load
process drives it with many concurrent callers for a fixed time; both export OTLP/HTTP (batch
span processor, periodic metric reader) to one receiver process on loopback, which counts the
protobuf bytes it is sent per signal and per side. The exporters' threads (encoding, sending)
are part of the cost, and only a run like this one shows them.

Modes:

- ``http-auto``: Streamable HTTP (uvicorn), `Client(url)`: the 2026-07-28 per-request path;
- ``http-legacy``: the same server, `Client(url, mode="legacy")`: the initialize handshake and a
  session per client;
- ``stdio``: the server is the load process's subprocess, over stdio (mode auto); one
  connection, as a host has, with every caller's requests in flight on it at once.

Configurations:

- ``bare``: no tracer provider anywhere (the SDK's span middleware is a no-op);
- ``sdk-server``: the SDK's own span middleware in the server, exporting; a bare load process;
- ``floor-server``: the conventions' minimum on the server: the SDK's span middleware and the one
  metric record the conventions require (the server duration of each `tools/call`), written by hand
  as in ``benchmarks/overhead.py``, exporting; a bare load process;
- ``mcpobs-server``: ``mcpobs.instrument(clients=False)`` in the server, exporting; a bare load process;
- ``mcpobs-server-lean``: the same with ``omit_attributes=["peer", "contract"]``: the per-session
  facts on the handshake spans and the metrics only, so each call's span is smaller;
- ``sdk``: the SDK's own tracing in the server and in the load process's clients, both exporting;
- ``mcpobs``: ``mcpobs.instrument()`` on both sides, both exporting.

The ratios that matter are taken in the same run: ``mcpobs-server / sdk-server`` (the goal:
throughput at least 0.97x, server CPU per call and p99 at most 1.05x, in every mode) and
``mcpobs / sdk`` (the instrumented client beside the SDK's own client spans). ``mcpobs-server /
floor-server`` says how much of the first gap is what the conventions require (a metric the SDK's
tracing does not record) and how much is mcpobs's own. CPU per call is a
process's user + system time over the measured window (/proc, every thread: the batch exporter's
and the metric reader's included) over the calls made in it; the receiver's CPU is not counted.
Span bytes per call are the `tools/call` spans' (each with its share of its batch's envelope:
resource, scope, framing) over the calls made, warm-up included; each caller makes one failing
call (a `ToolError`) before the measured window, for the span bytes of a failing call; metric bytes per call are every
metric export of the configuration's run over its calls, so they depend on the export interval
(one export every 5 s, cumulative temporality) and fall as throughput rises.

On a small shared machine the load process competes with the server for the same cores: read
ratios, not absolute numbers, and prefer a quiet machine and ``--rounds 3`` (interleaved rounds,
the median of each figure).

    python benchmarks/saturation.py --write-docs              # every mode and configuration
    python benchmarks/saturation.py --modes http-legacy --configs sdk-server,mcpobs-server --seconds 5
    python benchmarks/saturation.py --from-json benchmarks/results/saturation.json --write-docs
    python benchmarks/saturation.py --profile --modes http-auto  # where mcpobs's server time goes
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MODES = ("http-auto", "http-legacy", "stdio")
CONFIGS = ("bare", "sdk-server", "floor-server", "mcpobs-server", "mcpobs-server-lean", "sdk", "mcpobs")
PAIRS = (
    ("mcpobs-server", "sdk-server"),
    ("mcpobs-server", "floor-server"),
    ("mcpobs-server-lean", "sdk-server"),
    ("mcpobs", "sdk"),
)
LEAN = ("peer", "contract")
"""The attribute groups `mcpobs-server-lean` omits: every call's per-session facts (docs/privacy.md)."""
SIGNALS = ("traces", "metrics")
SIDES = ("server", "client")
GOAL_THROUGHPUT, GOAL_COST = 0.97, 1.05
METRIC_INTERVAL_MS = 5000
JSON_OUT = Path("benchmarks/results/saturation.json")  # these four under --root (default: the checkout)
SVG_OUT = Path("docs/images/saturation.svg")
DOCS = Path("docs/benchmarks.md")
README = Path("README.md")
DOCS_MARKERS = ("<!-- saturation:begin (benchmarks/saturation.py --write-docs) -->", "<!-- saturation:end -->")
README_MARKERS = (
    "<!-- saturation-table:begin (benchmarks/saturation.py --write-docs) -->",
    "<!-- saturation-table:end -->",
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _cpu_seconds(pid: int, main_thread: bool = False) -> float:
    """User + system CPU seconds of a process, all its threads or its main thread alone (Linux /proc)."""
    stat = Path(f"/proc/{pid}/task/{pid}/stat" if main_thread else f"/proc/{pid}/stat")
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _child_server(parent: int) -> int:
    """The pid of the stdio server the load process `parent` started (its only `--role server` child)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if ppid == parent and b"server" in (entry / "cmdline").read_bytes().split(b"\0"):
                return int(entry.name)
        except (OSError, ValueError):
            continue  # a process that ended while the scan read it
    raise RuntimeError(f"the load process {parent} has no stdio server child")


def _providers(otlp: str, side: str) -> tuple[Any, Any]:
    """The benchmark's own exporting providers (no OTEL_* variable reaches the processes)."""
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({SERVICE_NAME: f"bench-{side}"})  # the receiver tells the sides apart by it
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{otlp}/v1/traces")))
    reader = PeriodicExportingMetricReader(OTLPMetricExporter(endpoint=f"{otlp}/v1/metrics"), METRIC_INTERVAL_MS)
    meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    trace.set_tracer_provider(tracer_provider)  # the SDK's own spans use the global provider
    return tracer_provider, meter_provider


# -- the three roles, each its own process ---------------------------------------------------


def _service(resource: Any) -> str:
    for attribute in resource.attributes:
        if attribute.key == "service.name":
            return attribute.value.string_value.removeprefix("bench-")
    return "?"


def _points(metric: Any) -> int:
    kind = metric.WhichOneof("data")
    return len(getattr(metric, kind).data_points) if kind else 0


def receiver(port: int) -> None:
    """Accepts OTLP/HTTP exports and tallies them; `GET /count` answers the tallies so far as JSON.

    A tally is keyed "signal side" and holds the protobuf bytes (decompressed, should an exporter
    compress), the items (spans, metric data points) and the exports; for traces also the spans
    of the `echo` calls (`call_`) and of the failing calls (`fail_`) and their bytes, each with its
    share of its batch's envelope, so that the handshakes and listings do not weigh on either. Each process
    exports one resource, so a whole request is counted to the side its first resource names.
    """
    import gzip

    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    tallies: dict[str, dict[str, float]] = {}
    lock = threading.Lock()

    def tally(signal_name: str, body: bytes) -> None:
        counts: dict[str, float] = {"bytes": len(body), "exports": 1}
        if signal_name == "traces":
            request: Any = ExportTraceServiceRequest.FromString(body)
            groups = request.resource_spans
            spans = [span for r in groups for s in r.scope_spans for span in s.spans]
            # the batch's envelope (resource, scope, framing) shared out by span
            envelope = (len(body) - sum(span.ByteSize() for span in spans)) / max(len(spans), 1)
            counts["items"] = len(spans)
            for kind, tool in (("call", "tools/call echo"), ("fail", "tools/call fail")):
                sizes = [span.ByteSize() for span in spans if span.name.endswith(tool)]
                counts |= {f"{kind}_items": len(sizes), f"{kind}_bytes": sum(sizes) + envelope * len(sizes)}
        else:
            request = ExportMetricsServiceRequest.FromString(body)
            groups = request.resource_metrics
            counts["items"] = sum(_points(m) for r in groups for s in r.scope_metrics for m in s.metrics)
        side = _service(groups[0].resource) if groups else "?"
        with lock:
            t = tallies.setdefault(f"{signal_name} {side}", {})
            for key, n in counts.items():
                t[key] = t.get(key, 0) + n

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["content-length"]))
            if self.headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            signal_name = self.path.rsplit("/", 1)[-1]
            if signal_name in SIGNALS:
                tally(signal_name, body)  # counted before the answer: an exporter that has returned is counted
            self._answer(b"")

        def do_GET(self) -> None:
            with lock:
                self._answer(json.dumps(tallies).encode())

        def _answer(self, body: bytes) -> None:
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def server(config: str, mode: str, port: int, otlp: str, profile: str) -> None:
    """The server: uvicorn on `port`, or stdio; flushes its exporters and profile as it stops."""
    import cProfile
    import logging

    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    logging.disable(logging.WARNING)
    providers = _providers(otlp, "server") if config != "bare" else None
    if config.startswith("mcpobs"):
        import mcpobs

        assert providers is not None
        omitted = LEAN if config == "mcpobs-server-lean" else ()
        mcpobs.instrument(
            tracer_provider=providers[0], meter_provider=providers[1], clients=False, omit_attributes=omitted
        )
    profiler = cProfile.Profile() if profile else None  # the wall clock: a CPU clock per call is a syscall

    def finish() -> None:
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(profile)
        for provider in providers or ():
            provider.shutdown()

    def finish_then_exit(signum: int, frame: object) -> None:
        # uvicorn hands SIGTERM on after its graceful shutdown, which skips `atexit`: these
        # providers are the benchmark's own, so it flushes them itself to count every span.
        finish()
        os._exit(0)

    signal.signal(signal.SIGTERM, finish_then_exit)
    middleware = []
    if config == "floor-server":
        from harness.floor import ServerDuration as _ServerDuration  # the instruction counts' floor's record

        assert providers is not None
        middleware.append(_ServerDuration(providers[1], "auto" if mode == "stdio" else "http"))
    app = MCPServer("bench", middleware=middleware)

    @app.tool()
    def echo(text: str) -> str:
        return text

    @app.tool()
    def fail() -> str:
        raise ToolError("the benchmark's failing call")  # the expected kind: an isError result, no traceback

    if profiler is not None:
        profiler.enable()
    if mode == "stdio":
        app.run("stdio")  # returns when the client closes stdin
        finish()
        return
    import uvicorn

    uvicorn.run(app.streamable_http_app(), host="127.0.0.1", port=port, log_level="error")


def load(config: str, mode: str, target: str, clients: int, seconds: float, warm: float, otlp: str) -> None:
    """Drives the server with `clients` concurrent callers; prints `measuring`, `done`, then its figures."""
    import logging

    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    logging.disable(logging.WARNING)
    if config in ("sdk", "mcpobs"):
        tracer_provider, meter_provider = _providers(otlp, "client")  # flushed by their own atexit
        if config == "mcpobs":
            import mcpobs

            mcpobs.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    latencies: list[float] = []
    made = [0]  # every call, warm-up included: what the exported bytes are divided by
    ready = [0]  # callers past their first call
    state = {"measuring": False, "stop": False}
    window: dict[str, float] = {}

    async def caller(client: Client) -> None:
        await client.call_tool("fail", {})  # one per caller, before the measured window: its bytes
        await client.call_tool("echo", {"text": "hello"})
        made[0] += 1
        ready[0] += 1
        while not state["stop"]:
            started = time.perf_counter()
            await client.call_tool("echo", {"text": "hello"})
            made[0] += 1
            if state["measuring"]:
                latencies.append(time.perf_counter() - started)

    async def http_caller() -> None:
        async with Client(target, mode="legacy" if mode == "http-legacy" else "auto") as client:
            await client.list_tools()
            await caller(client)

    async def clock() -> None:
        while ready[0] < clients:  # every caller connected: handshakes are not what is measured
            await anyio.sleep(0.05)
        await anyio.sleep(warm)
        window["wall"] = time.perf_counter()
        print("measuring", flush=True)  # the parent reads both processes' CPU now, and at `done`
        state["measuring"] = True
        await anyio.sleep(seconds)
        state["measuring"] = False
        window["wall"] = time.perf_counter() - window["wall"]
        print("done", flush=True)
        state["stop"] = True

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(clock)
            if mode != "stdio":
                for _ in range(clients):
                    tg.start_soon(http_caller)
                return
            command = [sys.executable, *json.loads(target)]
            async with Client(StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))) as c:
                await c.list_tools()
                async with anyio.create_task_group() as callers:
                    for _ in range(clients):
                        callers.start_soon(caller, c)

    anyio.run(main)
    ordered = sorted(latencies)
    figures = {
        "calls": len(ordered),
        "all_calls": made[0],
        "wall": window["wall"],
        "p50": statistics.median(ordered),
        "p99": ordered[int(len(ordered) * 0.99)],
    }
    print(json.dumps(figures), flush=True)


# -- the parent: one run, every mode and configuration -----------------------------------------


def _wait_for(port: int, process: subprocess.Popen[Any], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"nothing listens on {port}") from None
            time.sleep(0.05)


def _tallies(receiver_port: int) -> dict[str, dict[str, float]]:
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{receiver_port}/count", timeout=5) as reply:
        return json.loads(reply.read())


def _line(process: subprocess.Popen[str], expected: str) -> None:
    assert process.stdout is not None
    got = process.stdout.readline().strip()
    if got != expected:
        process.kill()
        raise RuntimeError(f"the load process said {got!r}, not {expected!r} (its stderr is above)")


def measure(mode: str, config: str, args: argparse.Namespace, receiver_port: int, profile: str) -> dict[str, Any]:
    """One configuration in one mode: fresh server and load processes, the receiver's tallies before and after."""
    me = [sys.executable, str(Path(__file__).resolve())]
    otlp = f"http://127.0.0.1:{receiver_port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    port = _free_port()
    server_args = ["--role", "server", "--config", config, "--mode", mode, "--port", str(port), "--otlp", otlp]
    server_args += ["--profile-out", profile] if profile else []
    srv = None
    if mode == "stdio":
        target = json.dumps([me[1], *server_args])  # the load process starts it
    else:
        srv = subprocess.Popen([*me, *server_args], env=env)
        _wait_for(port, srv)
        target = f"http://127.0.0.1:{port}/mcp"
    before = _tallies(receiver_port)
    try:
        load_args = ["--clients", str(args.clients), "--seconds", str(args.seconds), "--warm", str(args.warm)]
        drive = subprocess.Popen(
            [*me, "--role", "load", "--config", config, "--mode", mode, "--target", target, "--otlp", otlp, *load_args],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        # a load process that hangs (its server died, say) would block the readlines below for ever
        watchdog = threading.Timer(args.warm + args.seconds + 300, drive.kill)
        watchdog.daemon = True
        watchdog.start()
        _line(drive, "measuring")
        server_pid = srv.pid if srv else _child_server(drive.pid)
        wall, server_cpu, client_cpu = time.perf_counter(), _cpu_seconds(server_pid), _cpu_seconds(drive.pid)
        server_main = _cpu_seconds(server_pid, main_thread=True)
        _line(drive, "done")
        server_main = _cpu_seconds(server_pid, main_thread=True) - server_main
        server_cpu = _cpu_seconds(server_pid) - server_cpu
        client_cpu = _cpu_seconds(drive.pid) - client_cpu
        wall = time.perf_counter() - wall
        assert drive.stdout is not None
        result = json.loads(drive.stdout.readline())
        if drive.wait(120) != 0:
            raise RuntimeError(f"the load process exited with {drive.returncode}")
        watchdog.cancel()
    finally:
        if srv is not None:
            srv.terminate()
            srv.wait(60)
    # Both processes have flushed and exited, and the receiver counts an export before it answers.
    after = _tallies(receiver_port)
    received = {key: {k: n - before.get(key, {}).get(k, 0) for k, n in tally.items()} for key, tally in after.items()}
    cpu = {"server_cpu": server_cpu, "server_main_cpu": server_main, "client_cpu": client_cpu}
    return {**result, "cpu_wall": wall, **cpu, "received": received}


def run(args: argparse.Namespace, modes: list[str], configs: list[str], profiles: Path | None = None) -> dict[str, Any]:
    """Every (mode, configuration), `args.rounds` times interleaved; the JSON is saved as each round ends."""
    from harness.machine import machine

    started = time.perf_counter()
    receiver_port = _free_port()
    rcv = subprocess.Popen([sys.executable, __file__, "--role", "receiver", "--port", str(receiver_port)])
    data: dict[str, Any] = {
        "machine": machine(),
        "clients": args.clients,
        "seconds": args.seconds,
        "warm": args.warm,
        "rounds": args.rounds,
        "metric_interval_s": METRIC_INTERVAL_MS / 1000,
        "run_seconds": 0.0,
        "runs": {mode: {config: [] for config in configs} for mode in modes},
    }
    try:
        _wait_for(receiver_port, rcv)
        for n in range(args.rounds):
            for mode in modes:
                for config in configs:
                    profile = str(profiles / f"{mode}-{config}.prof") if profiles and config != "bare" else ""
                    raw = measure(mode, config, args, receiver_port, profile)
                    data["runs"][mode][config].append(raw)
                    summary = derive([raw])
                    print(f"round {n + 1}, {mode}, {config}: {_brief(summary)}", file=sys.stderr, flush=True)
            data["run_seconds"] = time.perf_counter() - started
            if args.json:
                args.json.parent.mkdir(parents=True, exist_ok=True)
                args.json.write_text(json.dumps(data, indent=1) + "\n")
    finally:
        rcv.terminate()
        rcv.wait(10)
    return data


# -- figures: derived from the raw runs, so --from-json recomputes them ------------------------


def derive(raws: list[dict[str, Any]]) -> dict[str, float]:
    """The figures of one (mode, configuration): each the median over its rounds."""

    def one(raw: dict[str, Any]) -> dict[str, float]:
        rate = raw["calls"] / raw["wall"]
        per_call = 1e6 / (rate * raw["cpu_wall"])  # CPU over the parent's window, calls over the load's
        figures = {
            "calls_per_s": rate,
            "p50_ms": raw["p50"] * 1e3,
            "p99_ms": raw["p99"] * 1e3,
            "server_cpu_us": raw["server_cpu"] * per_call,
            # the event loop's thread; the rest is the exporters' threads (and stdio's stdin reader)
            "server_main_cpu_us": raw.get("server_main_cpu", raw["server_cpu"]) * per_call,
            "client_cpu_us": raw["client_cpu"] * per_call,
        }
        for signal_name in SIGNALS:
            for side in SIDES:
                tally = raw["received"].get(f"{signal_name} {side}", {})
                # spans: the `tools/call` spans alone; metrics: every export, over the calls
                prefix = "call_" if signal_name == "traces" else ""
                figures[f"{signal_name}_bytes_{side}"] = tally.get(f"{prefix}bytes", 0) / raw["all_calls"]
                figures[f"{signal_name}_items_{side}"] = tally.get(f"{prefix}items", 0) / raw["all_calls"]
                figures[f"{signal_name}_exports_{side}"] = tally.get("exports", 0)
        for side in SIDES:  # one failing call per caller, in the warm-up: bytes per failing call
            failing = raw["received"].get(f"traces {side}", {})
            figures[f"fail_bytes_{side}"] = failing.get("fail_bytes", 0) / max(failing.get("fail_items", 0), 1)
        return figures

    rounds = [one(raw) for raw in raws]
    return {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}


def summaries(data: dict[str, Any]) -> dict[str, dict[str, dict[str, float]]]:
    return {
        mode: {config: derive(raws) for config, raws in by_config.items() if raws}
        for mode, by_config in data["runs"].items()
    }


def _bytes(figures: dict[str, float], signal_name: str) -> float:
    """Bytes per call of one signal ("traces", "metrics", or "fail": span bytes per failing call), both sides."""
    return sum(figures[f"{signal_name}_bytes_{side}"] for side in SIDES)


def _brief(f: dict[str, float]) -> str:
    return (
        f"{f['calls_per_s']:.0f} calls/s, p50 {f['p50_ms']:.1f} ms, p99 {f['p99_ms']:.1f} ms, "
        f"server {f['server_cpu_us']:.0f} µs/call, client {f['client_cpu_us']:.0f} µs/call, "
        f"spans {_bytes(f, 'traces'):.0f} B/call, metrics {_bytes(f, 'metrics'):.0f} B/call"
    )


# (label, figure, goal: ("min", x) the ratio must reach x, ("max", x) stay at or under it, None: shown only)
RATIOS: tuple[tuple[str, Callable[[dict[str, float]], float], tuple[str, float] | None], ...] = (
    ("throughput", lambda f: f["calls_per_s"], ("min", GOAL_THROUGHPUT)),
    ("p50", lambda f: f["p50_ms"], None),
    ("p99", lambda f: f["p99_ms"], ("max", GOAL_COST)),
    ("server CPU per call", lambda f: f["server_cpu_us"], ("max", GOAL_COST)),
    ("server CPU per call, event-loop thread", lambda f: f["server_main_cpu_us"], None),
    ("server CPU per call, other threads", lambda f: f["server_cpu_us"] - f["server_main_cpu_us"], None),
    ("client CPU per call", lambda f: f["client_cpu_us"], ("max", GOAL_COST)),
    ("span bytes per call", lambda f: _bytes(f, "traces"), None),
    ("span bytes per failing call", lambda f: _bytes(f, "fail"), None),
)


def ratio_cell(ours: dict[str, float], theirs: dict[str, float], label: str) -> str:
    """`ours / theirs` for one RATIOS row, bold, with "(goal ...)" after a missed goal."""
    _, figure, goal = next(r for r in RATIOS if r[0] == label)
    base = figure(theirs)
    if base <= 0:
        return "-"
    ratio = figure(ours) / base
    if goal is None:
        return f"{ratio:.2f}x"
    kind, limit = goal
    met = ratio >= limit if kind == "min" else ratio <= limit
    return f"**{ratio:.2f}x**" if met else f"**{ratio:.2f}x** (goal {'≥' if kind == 'min' else '≤'} {limit})"


def _pair_rows(by_mode: dict[str, dict[str, dict[str, float]]], ours: str, theirs: str) -> Iterator[str]:
    modes = list(by_mode)
    for label, _, goal in RATIOS:
        if ours.startswith("mcpobs-server") and label == "client CPU per call":
            continue  # the same bare load process on both sides of the ratio
        cells = [
            ratio_cell(by_mode[m][ours], by_mode[m][theirs], label) if {ours, theirs} <= by_mode[m].keys() else "-"
            for m in modes
        ]
        target = "-" if goal is None else f"{'≥' if goal[0] == 'min' else '≤'} {goal[1]}"
        yield f"| {ours} / {theirs}: {label} | {' | '.join(cells)} | {target} |"


def ratio_table(data: dict[str, Any]) -> str:
    by_mode = summaries(data)
    lines = [f"| ratio, same run | {' | '.join(by_mode)} | goal |", "|---|" + "---:|" * (len(by_mode) + 1)]
    for ours, theirs in PAIRS:
        if any({ours, theirs} <= figures.keys() for figures in by_mode.values()):
            lines += _pair_rows(by_mode, ours, theirs)
    return "\n".join(lines) + "\n"


def mode_table(figures: dict[str, dict[str, float]]) -> str:
    lines = [
        "| config | calls/s | p50 ms | p99 ms | server CPU µs/call (event loop + other threads) | client CPU µs/call "
        "| spans/call (server + client) | span B/call (server + client) | span B/failing call (server + client) "
        "| metric B/call (server + client) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for config, f in figures.items():
        spans = f"{f['traces_items_server']:.2f} + {f['traces_items_client']:.2f}"
        span_bytes = f"{f['traces_bytes_server']:,.0f} + {f['traces_bytes_client']:,.0f}"
        failing = f"{f['fail_bytes_server']:,.0f} + {f['fail_bytes_client']:,.0f}"
        metric_bytes = f"{f['metrics_bytes_server']:,.0f} + {f['metrics_bytes_client']:,.0f}"
        main = f["server_main_cpu_us"]
        server_cpu = f"{f['server_cpu_us']:,.0f} ({main:,.0f} + {f['server_cpu_us'] - main:,.0f})"
        lines.append(
            f"| {config} | {f['calls_per_s']:,.0f} | {f['p50_ms']:.1f} | {f['p99_ms']:.1f} | {server_cpu} "
            f"| {f['client_cpu_us']:,.0f} | {spans} | {span_bytes} | {failing} | {metric_bytes} |"
        )
    return "\n".join(lines) + "\n"


def report(data: dict[str, Any]) -> str:
    """The plain-text report of a run: a table per mode, then the ratios."""
    out = [
        f"Saturation: {data['clients']} concurrent callers, {data['seconds']:g} s measured per configuration, "
        f"{data['rounds']} round(s) (median); {data['machine']}",
        "",
    ]
    for mode, figures in summaries(data).items():
        out += [f"### {mode}", "", mode_table(figures)]
    out += ["### Ratios", "", ratio_table(data)]
    return "\n".join(out)


# -- docs: the SVG plot, the section of docs/benchmarks.md, the README rows --------------------


def _paragraph(text: str) -> str:
    """Markdown prose wrapped at 100 columns, links and code unbroken."""
    return textwrap.fill(text, 100, break_on_hyphens=False, break_long_words=False)


def plot(data: dict[str, Any]) -> str:
    from harness import svg as _svg

    by_mode = summaries(data)
    configs = [c for c in CONFIGS if any(c in figures for figures in by_mode.values())]
    series: dict[str, Sequence[float]] = {
        c: [by_mode[m].get(c, {}).get("calls_per_s", 0.0) for m in by_mode] for c in configs
    }
    title = f"Throughput at saturation, {data['clients']} callers, exporting OTLP/HTTP"
    return _svg.bars(title, "tools/call per second", list(by_mode), series)


def section(data: dict[str, Any], svg: Path, docs: Path) -> str:
    """The saturation section of docs/benchmarks.md (the plot at `svg`, linked relative to `docs`)."""
    rel = os.path.relpath(svg, docs.parent)
    out = [
        "## Throughput at saturation, with real export (issue 42)",
        "",
        _paragraph(
            "`benchmarks/saturation.py`: per mode and configuration, a fresh server process serves a trivial "
            "`echo` tool while a fresh load process drives it with concurrent callers for a fixed time; both "
            "export OTLP/HTTP (batch span processor, periodic metric reader) to one receiver process on "
            "loopback, which counts the protobuf bytes per signal and per side. Modes: **http-auto** "
            '(Streamable HTTP, `Client(url)`: the 2026-07-28 path), **http-legacy** (`mode="legacy"`: the '
            "initialize handshake, a session per client) and **stdio** (the server as the load process's "
            "subprocess, one connection carrying every caller's requests). Configurations: `bare` (no tracer "
            "provider), `sdk-server` (the SDK's own span middleware in the server), `floor-server` (the "
            "conventions' minimum: the same spans and the one record the conventions require, each `tools/call`'s "
            "server duration, written by hand), `mcpobs-server` "
            "(`instrument(clients=False)` in the server), `mcpobs-server-lean` (the same with "
            '`omit_attributes=["peer", "contract"]`: the per-session facts on the handshake spans and the '
            "metrics, not on every call; docs/privacy.md), `sdk` (the SDK's own tracing on both sides), `mcpobs` "
            "(`instrument()` on both sides). The goals (issue 42): `mcpobs-server` serves at least "
            f"{GOAL_THROUGHPUT}x the throughput of `sdk-server`, with server CPU per call and p99 within "
            f"{GOAL_COST}x, in every mode; `mcpobs` against `sdk` the same way.",
        ),
        "",
        _paragraph(
            "CPU per call is each process's user + system time over the measured window, every thread (the "
            "exporters' included), over the calls made in it; the server's is also split into its event-loop "
            "thread (where requests are served) and its other threads (the batch span processor's and the "
            "metric reader's, which encode and send; over stdio also the SDK's stdin reader). Span bytes per call are the `tools/call` spans' "
            "protobuf bytes, each with its share of its batch's envelope (resource, scope, framing), over the "
            "calls; each caller also makes one failing call (a tool that raises `ToolError`) before the "
            "measured window, and those spans give the bytes per failing call. Metric bytes per call are "
            f"every metric export over the calls (cumulative, one export every {data['metric_interval_s']:g} "
            "s), so they fall as throughput rises. The load process competes with the server for the same "
            "cores: read the ratios, which come from one run.",
        ),
        "",
        "```bash",
        "python benchmarks/saturation.py --write-docs   # the run, this section, the plot, the README rows",
        "python benchmarks/saturation.py --from-json benchmarks/results/saturation.json --write-docs",
        "python benchmarks/saturation.py --profile --modes http-auto --configs sdk-server,mcpobs-server",
        "```",
        "",
        f"Measured on: {data['machine']}. {data['clients']} concurrent callers, {data['seconds']:g} s measured "
        f"after {data['warm']:g} s of warm-up per configuration, {data['rounds']} interleaved round(s) "
        f"(medians). Run time: {data['run_seconds'] / 60:.1f} min.",
        "",
        f"![Throughput at saturation]({rel})",
        "",
        ratio_table(data),
    ]
    for mode, figures in summaries(data).items():
        out += [f"### {mode}", "", mode_table(figures)]
    return "\n".join(out).rstrip() + "\n"


def readme_rows(data: dict[str, Any]) -> str:
    """The README's saturation rows: the server and both-sides ratios, and span bytes per call."""
    by_mode = summaries(data)
    commit = re.search(r"mcpobs (\w+)", data["machine"])
    runs = "one run" if data["rounds"] == 1 else f"the median of {data['rounds']} rounds"
    head = (
        _paragraph(
            f"Under load (`benchmarks/saturation.py`, {data['clients']} concurrent callers, every configuration "
            f"exporting OTLP/HTTP to a real receiver, {runs} at {commit[1] if commit else '?'}; the goals: at least "
            f"{GOAL_THROUGHPUT}x the SDK's own tracing's throughput, CPU per call and p99 at most {GOAL_COST}x; "
            "[details](docs/benchmarks.md#throughput-at-saturation-with-real-export-issue-42)):",
        )
        + "\n\n"
        + f"| at saturation | {' | '.join(by_mode)} |\n|---|"
        + "---:|" * len(by_mode)
    )
    rows: list[str] = []
    wanted = {
        ("mcpobs-server", "sdk-server"): ("throughput", "p99", "server CPU per call"),
        ("mcpobs-server", "floor-server"): ("throughput", "server CPU per call"),
        ("mcpobs-server-lean", "sdk-server"): ("throughput", "server CPU per call"),
        ("mcpobs", "sdk"): ("throughput", "client CPU per call"),
    }
    names = {"mcpobs-server": "`instrument(clients=False)`", "sdk-server": "the SDK's tracing"}
    names["floor-server"] = "the conventions' minimum (the SDK's tracing + the duration record)"
    names["mcpobs-server-lean"] = 'the same, `omit_attributes=["peer", "contract"]`'
    names |= {"mcpobs": "`instrument()`", "sdk": "the SDK's tracing, both sides"}
    for (ours, theirs), labels in wanted.items():
        for label in labels:
            cells = [
                ratio_cell(f[ours], f[theirs], label) if {ours, theirs} <= f.keys() else "-" for f in by_mode.values()
            ]
            rows.append(f"| {names[ours]} / {names[theirs]}: {label} | {' | '.join(cells)} |")

    def span_bytes(f: dict[str, dict[str, float]], signal_name: str) -> str:
        if not {"mcpobs", "sdk"} <= f.keys():
            return "-"
        ours, theirs = _bytes(f["mcpobs"], signal_name), _bytes(f["sdk"], signal_name)
        return f"{ours:,.0f} / {theirs:,.0f} ({ours / theirs:.2f}x)" if theirs else f"{ours:,.0f} / 0"

    for signal_name, what in (("traces", "an ok call"), ("fail", "a failing call")):
        cells = [span_bytes(f, signal_name) for f in by_mode.values()]
        rows.append(f"| span bytes of {what} (both sides), `instrument()` / the SDK's | {' | '.join(cells)} |")
    metric = [f"{_bytes(f['mcpobs'], 'metrics'):,.0f}" if "mcpobs" in f else "-" for f in by_mode.values()]
    rows.append(
        f"| metric bytes per call, `instrument()` (one export per {data['metric_interval_s']:g} s) | {' | '.join(metric)} |"
    )
    return head + "\n" + "\n".join(rows) + "\n"


def write_docs(data: dict[str, Any], root: Path) -> None:
    svg, docs = root / SVG_OUT, root / DOCS
    svg.parent.mkdir(parents=True, exist_ok=True)
    svg.write_text(plot(data))
    from harness.markers import replace_between  # benchmarks/ is on sys.path when run as a script

    replace_between(docs, DOCS_MARKERS, section(data, svg, docs))
    replace_between(root / README, README_MARKERS, readme_rows(data))


# -- the profile: where the server's time goes -------------------------------------------------


def _idle(key: tuple[str, int, str]) -> bool:
    """Whether a profile entry is the event loop waiting for work (a selector's poll)."""
    return key[0] == "~" and "of 'select." in key[2]


Profile = dict[tuple[str, int, str], tuple[int, int, float, float, Any]]
"""pstats' table: (file, line, function) -> (primitive calls, calls, own time, cumulative time, callers)."""


def _load_profile(path: Path) -> Profile:
    import pstats

    loaded: Any = pstats.Stats(str(path))  # its `stats` is undeclared
    stats: Profile = loaded.stats
    return {key: value for key, value in stats.items() if not _idle(key)}


def _where(key: tuple[str, int, str]) -> str:
    file, line, name = key
    if file == "~":
        return name
    parts = Path(file).parts
    for anchor in ("mcpobs", "site-packages", "lib"):  # the path from the package on
        if anchor in parts:
            return f"{'/'.join(parts[len(parts) - parts[::-1].index(anchor) :])}:{line} {name}"
    return f"{file}:{line} {name}"


def _own_table(stats: Profile, calls: int, top: int) -> list[str]:
    lines = ["| µs/call own | µs/call cumulative | calls/call | function |", "|---:|---:|---:|---|"]
    for key, v in sorted(stats.items(), key=lambda kv: -kv[1][2])[:top]:
        lines.append(f"| {v[2] / calls * 1e6:.1f} | {v[3] / calls * 1e6:.1f} | {v[1] / calls:.2f} | {_where(key)} |")
    return [*lines, ""]


def _difference_table(ours: Profile, theirs: Profile, calls: tuple[int, int], top: int) -> list[str]:
    """The functions whose own time per call grew most, whoever owns them (the OpenTelemetry SDK's too)."""
    grown = {
        key: ours.get(key, (0, 0, 0.0, 0.0, None))[2] / calls[0] - theirs.get(key, (0, 0, 0.0, 0.0, None))[2] / calls[1]
        for key in ours.keys() | theirs.keys()
    }
    lines = ["| µs/call own, difference | function |", "|---:|---|"]
    for key, diff in sorted(grown.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"| {diff * 1e6:+.1f} | {_where(key)} |")
    return [*lines, ""]


def profile_report(data: dict[str, Any], profiles: Path, top: int = 15) -> str:
    """Per mode, the main thread's time per call under cProfile: mcpobs's own functions, and what grew.

    cProfile sees the server's main thread only (the event loop: the middleware, the SDK, the
    spans' start and end), by the wall clock, less the event loop's waits in its selector; the
    exporters' threads run outside it, and the time they hold the GIL is in it. The whole life of
    the server is profiled (start-up and warm-up too), over its calls. "mcpobs's own code" is the
    time spent in functions defined in mcpobs's files (their own time, not what they call).
    """
    import mcpobs

    package = str(Path(mcpobs.__file__).resolve().parent)
    out: list[str] = []
    for mode, by_config in data["runs"].items():
        loaded = {
            config: (_load_profile(profiles / f"{mode}-{config}.prof"), raws[-1]["all_calls"])
            for config, raws in by_config.items()
            if raws and (profiles / f"{mode}-{config}.prof").exists()
        }
        for config, (stats, calls) in loaded.items():
            ours = {k: v for k, v in stats.items() if str(Path(k[0]).resolve()).startswith(package)}
            total, owned = sum(v[2] for v in stats.values()), sum(v[2] for v in ours.values())
            out += [
                f"### {mode}, {config}: {total / calls * 1e6:,.0f} µs per call in the main thread, "
                f"{owned / calls * 1e6:,.0f} µs of it in mcpobs's own code",
                "",
            ]
            out += _own_table(ours, calls, top) if ours else []
        for ours_name, theirs_name in PAIRS:
            if {ours_name, theirs_name} <= loaded.keys():
                (a, calls_a), (b, calls_b) = loaded[ours_name], loaded[theirs_name]
                diff = sum(v[2] for v in a.values()) / calls_a - sum(v[2] for v in b.values()) / calls_b
                out += [f"### {mode}: {ours_name} - {theirs_name} = {diff * 1e6:+,.0f} µs per call", ""]
                out += _difference_table(a, b, (calls_a, calls_b), top)
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--role", choices=("parent", "receiver", "server", "load"), default="parent", help=argparse.SUPPRESS
    )
    parser.add_argument("--config", choices=CONFIGS, default="bare", help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=MODES, default="http-auto", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--target", default="", help=argparse.SUPPRESS)
    parser.add_argument("--otlp", default="", help=argparse.SUPPRESS)
    parser.add_argument("--profile-out", default="", help=argparse.SUPPRESS)
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated subset of: " + ", ".join(MODES))
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated subset of: " + ", ".join(CONFIGS))
    parser.add_argument("--clients", type=int, default=50, help="concurrent callers (default 50)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds per configuration (default 10)")
    parser.add_argument("--warm", type=float, default=2.0, help="seconds of load before measuring (default 2)")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds; each figure is their median")
    parser.add_argument("--json", type=Path, help=f"where the raw numbers go (--write-docs: {JSON_OUT})")
    parser.add_argument("--from-json", type=Path, help="no run: the report and docs from a saved run")
    parser.add_argument(
        "--write-docs", action="store_true", help="write the JSON, the plot, the docs section, the README rows"
    )
    parser.add_argument(
        "--profile", action="store_true", help="run each server under cProfile; print mcpobs's top functions"
    )
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)  # the tests write a copy
    args = parser.parse_args()
    if args.role == "receiver":
        return receiver(args.port)
    if args.role == "server":
        return server(args.config, args.mode, args.port, args.otlp, args.profile_out)
    if args.role == "load":
        return load(args.config, args.mode, args.target, args.clients, args.seconds, args.warm, args.otlp)

    sys.path.insert(0, str(HERE))  # harness
    if args.profile and args.write_docs:
        parser.error("--profile slows the servers: its figures are not for the docs")
    if args.from_json:
        data = json.loads(args.from_json.read_text())
    else:
        modes, configs = args.modes.split(","), args.configs.split(",")
        for chosen, known in ((modes, MODES), (configs, CONFIGS)):
            if unknown := set(chosen) - set(known):
                parser.error(f"unknown {', '.join(sorted(unknown))}; choose from {', '.join(known)}")
        if args.write_docs and not args.json:
            args.json = args.root / JSON_OUT
        configs = [c for c in CONFIGS if c in configs]  # bare first, each pair's baseline before it
        with tempfile.TemporaryDirectory() as tmp:
            profiles = Path(tmp) if args.profile else None
            data = run(args, [m for m in MODES if m in modes], configs, profiles)
            if profiles:
                print(profile_report(data, profiles))
    print(report(data))
    if args.write_docs:
        write_docs(data, args.root)


if __name__ == "__main__":
    main()
