"""Cost under load, with real export: throughput and latency at saturation over Streamable HTTP.

Each configuration runs a fresh uvicorn server process exporting OTLP/HTTP (batch span
processor, periodic metric reader) to one receiver process on loopback, and a fresh load
process driving it with many concurrent `Client`s for a fixed time. The ratios are against
`bare`, measured in the same run:

- ``bare``: no tracer provider anywhere (the SDK's span middleware is a no-op);
- ``sdk``: the SDK's own span middleware, exporting;
- ``mcpobs-server``: ``mcpobs.instrument(clients=False)`` in the server, exporting;
- ``mcpobs``: mcpobs in the server and in the load process's clients, both exporting.

CPU per call is the processes' own user+system time over the measured window divided by the
calls made, every thread included (the batch exporter's, the metric reader's). The receiver's
CPU is not counted. On a small shared machine the load process competes with the server for
the same cores; the figures are ratios for that reason, and one run is noise-prone.

    python benchmarks/saturation.py                      # 100 clients, 10 s per configuration
    python benchmarks/saturation.py --clients 200 --seconds 10
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CONFIGS = ("bare", "sdk", "mcpobs-server", "mcpobs")
WARM = 2.0  # seconds of load, once every client is connected, before measuring


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process, all its threads (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _providers(otlp: str, service: str) -> tuple[Any, Any]:
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({"service.name": service})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{otlp}/v1/traces")))
    reader = PeriodicExportingMetricReader(OTLPMetricExporter(endpoint=f"{otlp}/v1/metrics"), 5000)
    meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    trace.set_tracer_provider(tracer_provider)  # the SDK's own spans use the global provider
    return tracer_provider, meter_provider


# -- the three roles, each its own process ---------------------------------------------------


def receiver(port: int) -> None:
    """Accepts OTLP/HTTP exports and counts spans; `GET /count` answers the count so far."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    spans = 0
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            nonlocal spans
            body = self.rfile.read(int(self.headers["content-length"]))
            if self.path.endswith("/v1/traces"):
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                with lock:
                    spans += sum(len(s.spans) for r in request.resource_spans for s in r.scope_spans)
            self._answer(b"")

        def do_GET(self) -> None:
            with lock:
                self._answer(str(spans).encode())

        def do_HEAD(self) -> None:
            self._answer(b"")

        def _answer(self, body: bytes) -> None:
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def server(config: str, port: int, otlp: str) -> None:
    import logging

    import uvicorn
    from mcp.server.mcpserver import MCPServer

    logging.disable(logging.WARNING)
    if config != "bare":
        tracer_provider, meter_provider = _providers(otlp, f"bench-server-{config}")

        def flush_then_exit(signum: int, frame: object) -> None:
            # uvicorn hands SIGTERM on after its graceful shutdown, which skips `atexit`: these
            # providers are the benchmark's own, so it flushes them itself to count every span.
            tracer_provider.shutdown()
            meter_provider.shutdown()
            os._exit(0)

        signal.signal(signal.SIGTERM, flush_then_exit)
        if config.startswith("mcpobs"):
            import mcpobs

            mcpobs.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider, clients=False)
    app = MCPServer("bench")

    @app.tool()
    def echo(text: str) -> str:
        return text

    uvicorn.run(app.streamable_http_app(), host="127.0.0.1", port=port, log_level="error")


def load(config: str, url: str, clients: int, seconds: float, otlp: str) -> None:
    import logging

    import anyio
    from mcp import Client

    logging.disable(logging.WARNING)
    if config == "mcpobs":
        import mcpobs

        tracer_provider, meter_provider = _providers(otlp, "bench-client")
        mcpobs.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    latencies: list[float] = []
    made = [0]  # every call, warm-up included: what the exported spans are compared with
    ready = [0]  # clients connected and past their first call
    state = {"measuring": False, "stop": False}
    window: dict[str, float] = {}

    async def one_client() -> None:
        async with Client(url) as client:
            await client.list_tools()
            await client.call_tool("echo", {"text": "hello"})
            made[0] += 1
            ready[0] += 1
            while not state["stop"]:
                started = time.perf_counter()
                await client.call_tool("echo", {"text": "hello"})
                made[0] += 1
                if state["measuring"]:
                    latencies.append(time.perf_counter() - started)

    async def clock() -> None:
        while ready[0] < clients:  # every client connected (handshakes are not what is measured)
            await anyio.sleep(0.05)
        await anyio.sleep(WARM)
        window["cpu"], window["wall"] = time.process_time(), time.perf_counter()
        print("measuring", flush=True)  # the parent starts reading the server's CPU now
        state["measuring"] = True
        await anyio.sleep(seconds)
        state["measuring"] = False
        window["cpu"] = time.process_time() - window["cpu"]
        window["wall"] = time.perf_counter() - window["wall"]
        print("done", flush=True)
        state["stop"] = True

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(clock)
            for _ in range(clients):
                tg.start_soon(one_client)

    anyio.run(main)
    ordered = sorted(latencies)
    print(
        json.dumps(
            {
                "calls": len(ordered),
                "all_calls": made[0],
                "wall": window["wall"],
                "client_cpu": window["cpu"],
                "p50": statistics.median(ordered),
                "p99": ordered[int(len(ordered) * 0.99)],
            }
        ),
        flush=True,
    )


# -- the parent: one run, every configuration ------------------------------------------------


def _wait_for(port: int, process: subprocess.Popen[Any], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"nothing listens on {port}") from None
            time.sleep(0.05)


def _spans(receiver_port: int) -> int:
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{receiver_port}/count", timeout=5) as reply:
        return int(reply.read())


def measure(config: str, clients: int, seconds: float, receiver_port: int) -> dict[str, float]:
    me = [sys.executable, str(Path(__file__).resolve())]
    otlp = f"http://127.0.0.1:{receiver_port}"
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    srv = subprocess.Popen([*me, "--role", "server", "--config", config, "--port", str(port), "--otlp", otlp], env=env)
    try:
        _wait_for(port, srv)
        before_spans = _spans(receiver_port)
        load_args = ["--clients", str(clients), "--seconds", str(seconds), "--otlp", otlp]
        drive = subprocess.Popen(
            [*me, "--role", "load", "--config", config, "--url", f"http://127.0.0.1:{port}/mcp", *load_args],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert drive.stdout is not None
        assert drive.stdout.readline().strip() == "measuring"
        cpu = _cpu_seconds(srv.pid)
        assert drive.stdout.readline().strip() == "done"
        server_cpu = _cpu_seconds(srv.pid) - cpu
        result = json.loads(drive.stdout.readline())
        drive.wait(60)
    finally:
        srv.terminate()
        srv.wait(30)
    time.sleep(6)  # the last batches (and the client's flush at exit) reach the receiver
    result["server_cpu"] = server_cpu
    result["spans"] = _spans(receiver_port) - before_spans
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--role", choices=("parent", "receiver", "server", "load"), default="parent")
    parser.add_argument("--config", choices=CONFIGS, default="bare")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--url", default="")
    parser.add_argument("--otlp", default="")
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--configs", default=",".join(CONFIGS))
    args = parser.parse_args()
    if args.role == "receiver":
        return receiver(args.port)
    if args.role == "server":
        return server(args.config, args.port, args.otlp)
    if args.role == "load":
        return load(args.config, args.url, args.clients, args.seconds, args.otlp)

    configs = tuple(c for c in args.configs.split(",") if c)
    receiver_port = _free_port()
    rcv = subprocess.Popen([sys.executable, __file__, "--role", "receiver", "--port", str(receiver_port)])
    results: dict[str, dict[str, float]] = {}
    try:
        _wait_for(receiver_port, rcv)
        for config in configs:
            results[config] = measure(config, args.clients, args.seconds, receiver_port)
            print(f"{config}: {results[config]}", file=sys.stderr, flush=True)
    finally:
        rcv.terminate()
        rcv.wait(10)
    base = results.get("bare") or next(iter(results.values()))
    base_rate = base["calls"] / base["wall"]
    print(f"Saturation over Streamable HTTP, {args.clients} clients, {args.seconds:.0f} s per configuration")
    print(f"(Python {sys.version.split()[0]}, {os.cpu_count()} cores; one run on a shared machine)\n")
    print(
        "| config | calls/s | vs bare | p50 ms | vs bare | p99 ms | vs bare | server CPU µs/call | client CPU µs/call | total vs bare | spans exported per call |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    base_cpu = (base["server_cpu"] + base["client_cpu"]) / base["calls"]
    for config, r in results.items():
        rate = r["calls"] / r["wall"]
        server_us = r["server_cpu"] / r["calls"] * 1e6
        client_us = r["client_cpu"] / r["calls"] * 1e6
        total = (r["server_cpu"] + r["client_cpu"]) / r["calls"]
        print(
            f"| {config} | {rate:.0f} | {rate / base_rate:.2f}x | {r['p50'] * 1e3:.1f} | {r['p50'] / base['p50']:.2f}x "
            f"| {r['p99'] * 1e3:.1f} | {r['p99'] / base['p99']:.2f}x | {server_us:.0f} | {client_us:.0f} "
            f"| {total / base_cpu:.2f}x | {r['spans'] / r['all_calls']:.2f} |"
        )


if __name__ == "__main__":
    main()
