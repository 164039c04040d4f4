"""What one progress report costs mcpobs, beside its floor, in instructions, in one run.

A tool reports progress N times per call (N = 0, 1, 10, 100, under the cap); the cost of a
report is the slope, (cost(N) - cost(0)) / N per call. Three configurations, each in a fresh
process under callgrind (`harness.window` counts the measured calls only):

- `sdk`: the SDK's own spans, no mcpobs; the report is the SDK's `report_progress` alone.
- `floor`: `sdk` + what mcpobs records per report, in plain OpenTelemetry code inside the
  tool right after the report: one `progress` INTERNAL span with the same attributes, a child
  of the request's span, ended at once, and one count on the same counter instrument mcpobs
  uses (`tally`) with the same labels.
- `mcpobs`: `instrument()`.

    python benchmarks/progress_floor.py                 # mode auto (in memory), the client passes a callback
    python benchmarks/progress_floor.py --mode legacy   # JSON-RPC in memory: the notification path too
"""

from __future__ import annotations

import json
import os
import sys

from harness import callgrind, cli
from harness.machine import machine
from harness.rounds import side_by_side
from harness.telemetry import providers
from harness.window import Window
from harness.workers import result
from mcp.server.mcpserver import Context  # at module level: the tool's annotations name it

CONFIGS = ("sdk", "floor", "mcpobs")
REPORTS = (0, 1, 10, 100)
CALLS, WARM = 10, 5
TARGET = 1.1


async def _run(config: str, mode: str, reports: int, calls: int) -> None:
    from mcp import Client
    from mcp.server.mcpserver import MCPServer
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind

    from mcpobs import semconv as S
    from mcpobs._core.tally import tally

    counts = callgrind.client()
    tracer_provider, meter_provider = providers("sdk")
    if config == "mcpobs":
        import mcpobs

        mcpobs.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    floor = config == "floor"
    tracer = trace.get_tracer("floor")
    counter = tally(meter_provider.get_meter("floor"), S.PROGRESS_REPORTS)
    labels = {S.MCP_METHOD_NAME: "tools/call", S.GEN_AI_TOOL_NAME: "work"}

    server = MCPServer("bench", version="1.0.0")

    @server.tool()
    async def work(n: int, ctx: Context) -> str:
        for i in range(1, n + 1):
            await ctx.report_progress(i, n, "step")
            if floor:
                attributes = {
                    S.PROGRESS_VALUE: float(i),
                    S.PROGRESS_REQUESTED: True,
                    S.PROGRESS_TOTAL: float(n),
                    S.PROGRESS_PERCENTAGE: float(i) / float(n) * 100.0,
                }  # no message: text a tool wrote is recorded only when opted in
                tracer.start_span(S.PROGRESS_SPAN, kind=SpanKind.INTERNAL, attributes=attributes).end()
                counter.add(1, labels)
        return "done"

    heard = [0]

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard[0] += 1

    async with Client(server, mode=mode) as client:
        for _ in range(WARM):
            await client.call_tool("work", {"n": reports}, progress_callback=on_progress)
        with Window(counts, settle=False):
            for _ in range(calls):
                await client.call_tool("work", {"n": reports}, progress_callback=on_progress)
    sys.stderr.write(json.dumps({"heard": heard[0]}) + "\n")


def _instructions(config: str, mode: str, reports: int, calls: int) -> float:
    """Instructions per call of one configuration, in a fresh process under callgrind."""
    worker = [sys.executable, __file__, "--worker", config, "--mode", mode]
    worker += ["--reports", str(reports), "--calls", str(calls)]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    stderr, total = callgrind.counted_once(worker, env, f"{config} N={reports}")
    if result(stderr)["heard"] != (WARM + calls) * reports:
        raise RuntimeError(f"{config} N={reports}: the client's callback did not hear every report")
    return total / calls


def main() -> None:
    parser = cli.parser(__doc__)
    parser.add_argument("--worker", choices=CONFIGS)
    parser.add_argument("--mode", choices=("auto", "legacy"), default="auto")
    parser.add_argument("--reports", type=int, default=0)
    parser.add_argument("--calls", type=int, default=CALLS, help=f"measured calls per point (default {CALLS})")
    args = parser.parse_args()
    if args.worker:
        import logging

        import anyio

        logging.disable(logging.WARNING)  # the SDK and mcpobs log at INFO while a session starts

        anyio.run(_run, args.worker, args.mode, args.reports, args.calls)
        return
    keys = [(c, n) for c in CONFIGS for n in REPORTS]
    cost = dict(side_by_side(keys, lambda key: _instructions(key[0], args.mode, key[1], args.calls)))
    print(f"Instructions per progress report, mode {args.mode}, {args.calls} calls per point. {machine()}\n")
    print("| reports per call | sdk | floor | mcpobs | mcpobs / floor |\n|---:|---:|---:|---:|---:|")
    for n in REPORTS[1:]:
        per = {c: (cost[c, n] - cost[c, 0]) / n for c in CONFIGS}
        ratio = per["mcpobs"] / per["floor"]
        flag = "" if ratio <= TARGET else f" (over {TARGET})"
        print(f"| {n} | {per['sdk']:,.0f} | {per['floor']:,.0f} | {per['mcpobs']:,.0f} | **{ratio:.3f}**{flag} |")
    calls = ", ".join(f"{c} {cost[c, 0] / 1000:,.0f}k" for c in CONFIGS)
    print(f"\nThe call itself (N = 0): {calls} instructions.")


if __name__ == "__main__":
    main()
