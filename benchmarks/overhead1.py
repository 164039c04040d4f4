"""What mcpobs costs per call on an mcp 1.x server, beside the floor of the same telemetry, in one run.

`overhead.py`'s measurement, for the server side of mcp 1.x: a FastMCP 1 server (`mcp.server.
fastmcp`, mcp 1.30) with a trivial `echo` tool, called by a 1.x `ClientSession` in memory
(`create_connected_server_and_client_session`: JSON-RPC over memory streams, the only in-memory
way 1.x has) and over Streamable HTTP on loopback (uvicorn in the same process). Every
configuration runs in a fresh process; ratios are to baselines of the same run. Run it with the
1.x venv's Python (scripts/sdk1-venv builds it):

    .venv-sdk1-1.30.0/bin/python benchmarks/overhead1.py --instructions   # instructions per call (valgrind)
    .venv-sdk1-1.30.0/bin/python benchmarks/overhead1.py                  # CPU time per call

| config | what runs |
|---|---|
| bare | no telemetry: mcp 1.x has none of its own |
| floor-server | what the conventions require of a server, the cheapest way: one SERVER span per request and one `mcp.server.operation.duration` record, from a plain function in place of the server's `_handle_request` (the seam mcpobs wraps; 1.x has no middleware chain) |
| floor-payload | mcpobs's floor, the same telemetry in plain OpenTelemetry code: floor-server + every attribute mcpobs's SERVER span carries (a span processor, one batch) + `mcpobs.server.requests` with mcpobs's labels (an observable counter) |
| mcpobs-server | `instrument(clients=False)`: mcpobs's server span, classification, verdict decision and metrics |

The 1.x client side (the `ClientSession` spans) is not measured here. The floors contain no
mcpobs code: the attributes and label sets they record are what an `mcpobs-server` worker of the
same run recorded (`describe`), so the floor moves exactly the metric points mcpobs does.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from contextlib import AsyncExitStack

from harness import callgrind, cli, telemetry  # line-neutral: nothing in it imports mcp as it loads
from harness.floor import Count, histogram
from harness.machine import machine
from harness.rounds import by_mode, medians, timed_by_mode
from harness.tables import heading, ratio
from harness.window import Window
from harness.workers import clean_env, run_worker
from overhead_configs import SEED

MODES = ("memory", "http")
CONFIGS = ("bare", "floor-server", "floor-payload", "mcpobs-server")
FLOOR_OF = {"mcpobs-server": "floor-payload"}
CONVENTIONS_OF = {"mcpobs-server": "floor-server"}
WARM = 50
_DESCRIBED = "MCPOBS_BENCH1_DESCRIBED"


def _server(config: str, described: dict | None, meter_provider):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from mcp.server.fastmcp import FastMCP

    server = FastMCP("bench")
    server._mcp_server.version = "1.0.0"  # a release, as a deployed server states

    @server.tool()
    def echo(text: str) -> str:
        return text

    if config.startswith("floor"):
        _floor(server._mcp_server, config, described or {}, meter_provider)
    return server


def _floor(lowlevel, config: str, described: dict, meter_provider) -> None:
    """The floor's server span and duration record (and for floor-payload its count), in place of
    this server's `_handle_request`: a plain function, the cheapest hook 1.x offers."""
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind

    from mcpobs import semconv as S

    tracer = trace.get_tracer("floor")
    duration = histogram(meter_provider, S.SERVER_OPERATION_DURATION)
    (labels,) = described["metrics"][S.SERVER_OPERATION_DURATION.name]
    count = None
    if config == "floor-payload":
        (counted,) = described["metrics"][S.SERVER_REQUESTS.name]
        count = Count(meter_provider, S.SERVER_REQUESTS, counted)
    kind = SpanKind.SERVER
    attributes = {S.MCP_METHOD_NAME: "tools/call", S.GEN_AI_TOOL_NAME: "echo"}
    original = lowlevel._handle_request

    async def handle_request(message, req, session, lifespan_context, raise_exceptions):
        if req.method != "tools/call":
            return await original(message, req, session, lifespan_context, raise_exceptions)
        with tracer.start_as_current_span("tools/call echo", kind=kind, attributes=attributes):
            start = time.perf_counter()
            await original(message, req, session, lifespan_context, raise_exceptions)
            duration.record(time.perf_counter() - start, labels)
            if count is not None:
                count.add()

    lowlevel._handle_request = handle_request


async def _session(server, mode: str, stack: AsyncExitStack):
    from mcp import ClientSession

    if mode == "memory":
        from mcp.shared.memory import create_connected_server_and_client_session

        return await stack.enter_async_context(create_connected_server_and_client_session(server._mcp_server))
    import httpx
    from mcp.client.streamable_http import streamable_http_client

    from mcpobs._cli.serving import serve

    url = stack.enter_context(serve(server.streamable_http_app())) + "/mcp"
    http = await stack.enter_async_context(httpx.AsyncClient(timeout=30))
    read, write, _ = await stack.enter_async_context(streamable_http_client(url, http_client=http))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


async def _run(config: str, mode: str, calls: int, describe: bool = False) -> dict:
    import random

    counts = callgrind.client()
    random.seed(SEED)
    described = json.loads(os.environ[_DESCRIBED]) if config.startswith("floor") else None
    if config == "floor-payload":
        os.environ[telemetry.PAYLOAD] = json.dumps({"SERVER": described["attributes"]})  # type: ignore[index]
    tracer_provider, meter_provider = telemetry.providers(config, describe)
    if config == "mcpobs-server":
        import mcpobs

        mcpobs.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider, clients=False)
    server = _server(config, described, meter_provider)
    arguments = {"text": "hi"}
    async with AsyncExitStack() as stack:
        session = await _session(server, mode, stack)
        for _ in range(min(WARM, calls)):
            await session.call_tool("echo", arguments)
        await telemetry.quiet()
        spans = telemetry.Counts.spans
        points = telemetry.points() if describe else {}
        with Window(counts) as window:
            for _ in range(calls):
                await session.call_tool("echo", arguments)
        cpu, wall = window.cpu, window.wall
        await telemetry.quiet()
        recorded = telemetry.recorded(points) if describe else {}
    found = {
        "cpu_us": cpu / calls * 1e6,
        "wall_us": wall / calls * 1e6,
        "spans_per_call": (telemetry.Counts.spans - spans) / calls,
    }
    if describe:
        found["attributes"] = telemetry.Counts.attributes.get("SERVER", {})
        found["metrics"] = recorded
    return found


def worker(args: argparse.Namespace) -> None:
    import logging

    import anyio

    logging.disable(logging.WARNING)
    sys.stderr.write(json.dumps(anyio.run(_run, args.worker, args.mode, args.calls, args.describe_spans)) + "\n")


# -- driver ------------------------------------------------------------------------------------------

_described: dict[str, str] = {}


def describe(mode: str) -> str:
    """What mcpobs's `tools/call echo` SERVER span carries and which metric points it moves, in this mode."""
    if mode not in _described:
        command = [*_command("mcpobs-server", mode, 5), "--describe-spans"]
        found = run_worker(command, _env(mode), f"describing mcpobs's span ({mode})")
        if not found["attributes"]:
            raise RuntimeError(f"no `tools/call echo` SERVER span from mcpobs ({mode})")
        _described[mode] = json.dumps({"attributes": found["attributes"], "metrics": found["metrics"]})
    return _described[mode]


def _command(config: str, mode: str, calls: int) -> list[str]:
    return [sys.executable, __file__, "--worker", config, "--mode", mode, "--calls", str(calls)]


def _env(mode: str) -> dict[str, str]:
    env = clean_env()
    if mode in _described:
        env[_DESCRIBED] = _described[mode]
    return env


def _spawn(config: str, mode: str, calls: int) -> dict:
    return run_worker(_command(config, mode, calls), _env(mode), f"{config} ({mode})")


def _instructions(config: str, mode: str, calls: int) -> dict:
    return callgrind.per_call(_command(config, mode, calls), _env(mode), f"{config} ({mode})", calls)


def _print_table(mode: str, measure: str, unit: str, values: dict[str, float], extra: dict[str, dict]) -> None:
    heading(mode, measure, ["config", unit, "vs bare", "vs its floor", "spans/call", "vs floor-server"])
    for c, v in values.items():
        bare, required = ratio(v, values, "bare"), ratio(v, values, CONVENTIONS_OF.get(c))
        against = f"**{v / values[floor]:.3f}**" if (floor := FLOOR_OF.get(c)) in values else "-"
        print(f"| {c} | {v:,.0f} | {bare} | {against} | {extra[c]['spans_per_call']:.2f} | {required} |")


def instructions(calls: int, http_calls: int, modes: tuple[str, ...], configs: tuple[str, ...]) -> None:
    callgrind.require_valgrind()
    print(f"Instructions per call (callgrind; start-up and warm-up not counted). {machine()}")
    for mode in modes:
        describe(mode)
    runs = by_mode(modes, configs, lambda mode, c: _instructions(c, mode, http_calls if mode == "http" else calls))
    for mode, results in runs:
        n = http_calls if mode == "http" else calls
        k = {c: r["instructions"] / 1000 for c, r in results.items()}
        _print_table(mode, f"instructions per call ({n} calls)", "k instr/call", k, results)


def table(rounds: int, calls: int, http_calls: int, modes: tuple[str, ...], configs: tuple[str, ...]) -> None:
    print(f"Timed: CPU time per call, median of {rounds} fresh-process rounds. {machine()}")

    def spawn(config: str, mode: str) -> dict:
        return _spawn(config, mode, http_calls if mode == "http" else calls)

    for mode, samples in timed_by_mode(rounds, modes, configs, spawn, describe):
        n = http_calls if mode == "http" else calls
        cpu, last = medians(samples, "cpu_us"), {c: s[-1] for c, s in samples.items()}
        _print_table(mode, f"CPU µs per call ({n} calls, {rounds} rounds)", "CPU µs/call", cpu, last)


def main() -> None:
    parser = cli.parser(__doc__)
    cli.per_call(parser, CONFIGS, MODES, "memory", 5, MODES)
    parser.add_argument("--instructions", action="store_true", help="count instructions under valgrind")
    parser.add_argument("--describe-spans", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    configs = tuple(args.configs.split(",")) if args.configs else CONFIGS
    modes = (args.only,) if args.only else MODES
    if args.instructions:
        instructions(args.calls or 1000, args.http_calls or 200, modes, configs)
    else:
        table(args.rounds, args.calls or 2000, args.http_calls or 200, modes, configs)


if __name__ == "__main__":
    main()
