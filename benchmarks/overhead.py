"""Overhead of mcpobs against the SDK's own middleware and against no telemetry, measured side by side.

Each configuration runs in a fresh process; configurations are interleaved round by round so
that a noisy neighbour slows all of them alike, and the table reports medians and ratios
against baselines taken in the same run. CPU time per call (client and server share the
process) is the measure; wall time is printed beside it.

    python benchmarks/overhead.py                 # the full table (a few minutes)
    python benchmarks/overhead.py --rounds 3 --calls 500 --quick
    python benchmarks/overhead.py --memory        # peak RSS after 100,000 calls
    python benchmarks/overhead.py --instructions  # instructions per call under valgrind: no noise

Instruction counts (callgrind) do not move with a noisy neighbour, so they compare two
versions of mcpobs exactly; they weigh cache misses and memory stalls at nothing, so the
timed table stays the measure the targets are stated in.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONFIGS = ("bare", "sdk", "mcpobs-server", "mcpobs", "mcpobs-sampled")
"""mcpobs-server: servers only (`instrument(clients=False)`), the like-for-like replacement of the SDK's span."""
FLOORS = {"sdk+histogram": 1, "bare+histograms": 2}
"""In memory only: the SDK's own middleware (or none) plus a bare middleware that records the
conventions' duration histogram, once (a server) or twice (a server and its client) per
request. No instrumentation that emits the duration metric the conventions require can cost
less than these; they show what is left of a ratio once the metric itself is paid for."""


# -- worker: one configuration in this fresh process -----------------------------------------------


def _providers(config: str):
    from opentelemetry import trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    class Discard(SpanExporter):
        def export(self, spans):
            return SpanExportResult.SUCCESS

    if config == "bare":
        return None, None
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    if config == "bare+histograms":
        return None, meter_provider
    sampler = ParentBased(TraceIdRatioBased(0.01)) if config == "mcpobs-sampled" else None
    tracer_provider = TracerProvider(sampler=sampler) if sampler else TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(Discard()))
    trace.set_tracer_provider(tracer_provider)  # the SDK's own spans use the global provider
    return tracer_provider, meter_provider


class _DurationOnly:
    """A server middleware that records only the duration histogram, `records` times per request."""

    def __init__(self, meter_provider, records: int) -> None:
        from mcpobs import semconv as S

        spec = S.SERVER_OPERATION_DURATION
        self.histogram = meter_provider.get_meter("floor").create_histogram(
            spec.name, unit=spec.unit, explicit_bucket_boundaries_advisory=list(spec.buckets)
        )
        self.records = records
        self.labels = {
            S.MCP_METHOD_NAME: "tools/call",
            S.MCP_PROTOCOL_VERSION: "2026-07-28",
            S.GEN_AI_TOOL_NAME: "echo",
            S.OUTCOME: S.Outcome.OK.value,
        }

    async def __call__(self, ctx, call_next):
        start = time.perf_counter()
        result = await call_next(ctx)
        elapsed = time.perf_counter() - start
        for _ in range(self.records):
            self.histogram.record(elapsed, self.labels)
        return result


def _server(config: str, meter_provider):
    from mcp.server.mcpserver import MCPServer

    floor = [_DurationOnly(meter_provider, FLOORS[config])] if config in FLOORS else []
    server = MCPServer("bench", middleware=floor)

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


async def _run(config: str, transport: str, calls: int, hostile: bool) -> dict[str, float]:
    from mcp import Client

    tracer_provider, meter_provider = _providers(config)
    if config.startswith("mcpobs"):
        import mcpobs

        mcpobs.instrument(
            tracer_provider=tracer_provider, meter_provider=meter_provider, clients=config != "mcpobs-server"
        )
    server = _server(config, meter_provider)
    sys.path.insert(0, str(HERE.parent / "tests"))
    from contextlib import ExitStack

    from transports import serve_http

    with ExitStack() as stack:
        target = server
        if transport == "http":
            target = stack.enter_context(serve_http(server.streamable_http_app())) + "/mcp"
        async with Client(target) as client:
            for _ in range(min(50, calls)):  # warm up: imports, caches, first listing
                await client.call_tool("echo", {"text": "hi"})
            cpu, wall = time.process_time(), time.perf_counter()
            for i in range(calls):
                await client.call_tool(f"tool_{i}" if hostile else "echo", {"text": "hi"})
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"cpu_us": cpu / calls * 1e6, "wall_us": wall / calls * 1e6}


def worker(args: argparse.Namespace) -> None:
    import logging

    import anyio

    logging.disable(logging.WARNING)  # the SDK logs every unknown tool at INFO
    result = anyio.run(_run, args.worker, args.transport, args.calls, args.hostile)
    if args.memory:
        import resource

        result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sys.stderr.write(json.dumps(result) + "\n")


# -- driver ------------------------------------------------------------------------------------------


def _spawn(config: str, transport: str, calls: int, hostile: bool = False, memory: bool = False) -> dict[str, float]:
    cmd = [sys.executable, __file__, "--worker", config, "--transport", transport, "--calls", str(calls)]
    cmd += ["--hostile"] if hostile else []
    cmd += ["--memory"] if memory else []
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, env={**os.environ, "OTEL_SDK_DISABLED": ""})
    return json.loads(done.stderr.strip().splitlines()[-1])


def table(rounds: int, calls: int, http_calls: int, transports: tuple[str, ...]) -> None:
    print(f"per-call CPU time, median of {rounds} fresh-process rounds, interleaved ({os.cpu_count()} cores)")
    for transport in transports:
        n = calls if transport == "memory" else http_calls
        configs = CONFIGS + tuple(FLOORS) if transport == "memory" else CONFIGS
        samples: dict[str, list[dict[str, float]]] = {c: [] for c in configs}
        for _ in range(rounds):
            for config in configs:
                samples[config].append(_spawn(config, transport, n))
        med = {c: statistics.median(s["cpu_us"] for s in samples[c]) for c in configs}
        wall = {c: statistics.median(s["wall_us"] for s in samples[c]) for c in configs}
        print(f"\n{transport} ({n} calls per round)")
        print(f"  {'config':<18}{'cpu µs/call':>12}{'wall µs/call':>14}{'vs bare':>9}{'vs sdk':>9}")
        for c in configs:
            print(f"  {c:<18}{med[c]:>12.0f}{wall[c]:>14.0f}{med[c] / med['bare']:>9.3f}{med[c] / med['sdk']:>9.3f}")
        if transport == "memory":
            print("  against the floors (the duration metric alone, no mcpobs):")
            for ours, floor in (("mcpobs-server", "sdk+histogram"), ("mcpobs-sampled", "bare+histograms")):
                print(f"    {ours} / {floor}: {med[ours] / med[floor]:.3f}")


def _instructions(config: str, transport: str, calls: int) -> int:
    """Instructions a worker executes in total (startup included, all threads), counted by callgrind."""
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__]
    cmd += ["--worker", config, "--transport", transport, "--calls", str(calls)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, env={**os.environ, "OTEL_SDK_DISABLED": ""})
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no count for {config}:\n{done.stderr[-2000:]}")
    return int(found[1])


def instructions(calls: int, transport: str) -> None:
    """Per call: the difference between a run of `warm` + `calls` calls and one of `warm`, over `calls`."""
    if shutil.which("valgrind") is None:
        sys.exit("--instructions needs valgrind on PATH (e.g. apt-get install valgrind)")
    from concurrent.futures import ThreadPoolExecutor

    configs = CONFIGS + tuple(FLOORS) if transport == "memory" else CONFIGS
    warm = 200 if transport == "memory" else 50
    print(f"{transport}: instructions per call (callgrind; {calls} calls, startup subtracted)")
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        base = {c: pool.submit(_instructions, c, transport, warm) for c in configs}
        full = {c: pool.submit(_instructions, c, transport, warm + calls) for c in configs}
        per_call = {c: (full[c].result() - base[c].result()) / calls for c in configs}
    print(f"  {'config':<18}{'k instr/call':>13}{'vs bare':>9}{'vs sdk':>9}")
    for c in configs:
        k = per_call[c] / 1000
        print(f"  {c:<18}{k:>13.0f}{per_call[c] / per_call['bare']:>9.3f}{per_call[c] / per_call['sdk']:>9.3f}")
    if transport == "memory":
        for ours, floor in (("mcpobs-server", "sdk+histogram"), ("mcpobs-sampled", "bare+histograms")):
            print(f"  {ours} / {floor}: {per_call[ours] / per_call[floor]:.3f}")


def memory(calls: int) -> None:
    print(f"peak RSS after {calls} in-memory calls (fresh process each)")
    for config in ("bare", "mcpobs"):
        for hostile in (False, True):
            peak = _spawn(config, "memory", calls, hostile=hostile, memory=True)["peak_rss_mb"]
            print(f"  {config:<8} {'unique tool names' if hostile else 'one tool name':<18} {peak:8.1f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", choices=CONFIGS + tuple(FLOORS))
    parser.add_argument("--transport", choices=("memory", "http"), default="memory")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--http-calls", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", choices=("memory", "http"), help="one transport instead of both")
    parser.add_argument("--hostile", action="store_true")
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--instructions", action="store_true", help="count instructions under valgrind")
    args = parser.parse_args()
    if args.worker:
        worker(args)
    elif args.instructions:
        for transport in (args.only,) if args.only else ("memory", "http"):
            default = 1000 if transport == "memory" else 200
            instructions(default if args.calls == 2000 else args.calls, transport)
    elif args.memory:
        memory(100_000 if args.calls == 2000 else args.calls)
    else:
        table(args.rounds, args.calls, args.http_calls, (args.only,) if args.only else ("memory", "http"))


if __name__ == "__main__":
    main()
