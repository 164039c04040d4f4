"""saturation.py's three roles, each its own process: the OTLP receiver, the server, the load.

saturation.py starts each as `saturation.py --role receiver|server|load ...`; the load process
prints `measuring` and `done` around its measured window, then its figures as one JSON line.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from saturation_configs import LEAN, METRIC_INTERVAL_MS, SIGNALS


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
        from harness.floor import ServerDuration  # the same hand-written record as the instruction counts' floor

        assert providers is not None
        middleware.append(ServerDuration(providers[1], "auto" if mode == "stdio" else "http"))
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
