"""What mcpobs costs per call, beside the floor the conventions set and beside a peer, in one run.

Every configuration runs in a fresh process, in each of three modes: in memory with
`Client(server)` (mode `auto`: direct dispatch, no JSON-RPC), in memory with
`Client(server, mode="legacy")` (the initialize handshake over JSON-RPC streams), and over
Streamable HTTP on loopback (uvicorn). Ratios are taken against baselines measured in the same
run, never against a number from elsewhere.

    python benchmarks/overhead.py                  # timed: CPU µs per call, every mode (~15 min)
    python benchmarks/overhead.py --instructions   # instructions per call under callgrind (~15 min)
    python benchmarks/overhead.py --only auto --configs bare,sdk,mcpobs --rounds 3
    python benchmarks/overhead.py --memory         # peak RSS after 100,000 calls

Instruction counts do not move with a noisy neighbour, so they are the measure to compare
versions with and to hold targets to; CPU time is printed beside them because instructions
weigh cache misses and memory stalls at nothing. The tables print as Markdown, headed by the
machine and the versions they were measured on, so docs/benchmarks.md takes them as they are.

The floors contain no mcpobs code. Each is what its configuration is required to emit, done
the cheapest way the OpenTelemetry SDK and the MCP SDK allow: the SDK's own span middleware
for the SERVER span, the SDK's own `MCP send` span (JSON-RPC modes) or one bare
`start_as_current_span` around the call (mode auto, where the SDK makes no client span) for
the CLIENT span, and one `Histogram.record` per required duration metric, with the same label
set mcpobs records. That is `floor-full`: what the conventions require.

mcpobs's own floor is `floor-payload`, the same telemetry mcpobs records written with plain
OpenTelemetry code: floor-full, plus every attribute mcpobs's two spans carry beyond the floor's
(the CLIENT span, the floor's own, starts with all of them; a span processor adds them to the
SDK's SERVER span as it starts, as growth.py's floor does), plus the two request counters mcpobs counts
on every call (`mcpobs.server.requests`, `mcpobs.client.requests`) with mcpobs's labels, each an
`ObservableCounter` reporting a total the floor adds to under a lock (the cheapest way the SDK
offers; a synchronous `Counter.add` costs about as much as a histogram record).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import overhead_configs
from harness import callgrind, cli
from harness.machine import machine, version
from harness.rounds import by_mode, medians, timed_by_mode
from harness.tables import heading, ratio
from harness.telemetry import PAYLOAD
from harness.workers import clean_env, run_worker
from overhead_configs import (
    CONFIGS,
    CONVENTIONS_OF,
    FASTMCP,
    FIELDS,
    FLOOR_OF,
    MODES,
    TARGET,
    WHAT,
)

_payloads: dict[str, str] = {}
"""Mode -> the attributes of mcpobs's spans in it (JSON), measured once per run by `describe`."""


def describe(mode: str) -> str:
    """What mcpobs's `tools/call echo` spans carry in this mode, for `floor-payload` to add."""
    if mode not in _payloads:
        command = [*_command("mcpobs", mode, 5), "--describe-spans"]
        attributes = run_worker(command, _env(mode), f"describing mcpobs's spans ({mode})")["attributes"]
        if set(attributes) != {"SERVER", "CLIENT"}:
            raise RuntimeError(
                f"expected a SERVER and a CLIENT `tools/call echo` span ({mode}), got {sorted(attributes)}"
            )
        _payloads[mode] = json.dumps(attributes)
    return _payloads[mode]


def _command(config: str, mode: str, calls: int, hostile: bool = False, memory: bool = False) -> list[str]:
    cmd = [sys.executable, __file__, "--worker", config, "--mode", mode, "--calls", str(calls)]
    return cmd + (["--hostile"] if hostile else []) + (["--memory"] if memory else [])


def _env(mode: str | None = None) -> dict[str, str]:
    env = clean_env()
    if mode in _payloads:
        env[PAYLOAD] = _payloads[mode]
    return env


def _check(config: str, result: dict[str, float]) -> dict[str, float]:
    if config == "sentry" and result["sentry_per_call"] < 1:
        raise RuntimeError(f"Sentry's MCP integration recorded {result['sentry_per_call']:.2f} transactions per call")
    return result


def _spawn(config: str, mode: str, calls: int, hostile: bool = False, memory: bool = False) -> dict[str, float]:
    return _check(config, run_worker(_command(config, mode, calls, hostile, memory), _env(mode), f"{config} ({mode})"))


def _instructions(config: str, mode: str, calls: int) -> dict[str, float]:
    """One worker under callgrind, instrumented only from the first measured call to the last.

    The worker starts instrumentation and zeroes the counts just before its calls and dumps
    them just after (harness.window), so the one dump holds the calls alone, on every thread
    (uvicorn's too), without start-up, warm-up or teardown.
    """
    return _check(config, callgrind.per_call(_command(config, mode, calls), _env(mode), f"{config} ({mode})", calls))


def _available(configs: tuple[str, ...]) -> tuple[str, ...]:
    if set(FASTMCP) & set(configs) and version("fastmcp") == "not installed":
        print("fastmcp: FastMCP is not installed, so its rows are left out (pip install -e '.[dev]')")
        configs = tuple(c for c in configs if c not in FASTMCP)
    if "sentry" in configs and version("sentry-sdk") == "not installed":
        print("sentry: sentry-sdk is not installed, so the peer row is left out (pip install -e '.[bench]')")
        return tuple(c for c in configs if c != "sentry")
    return configs


def _print_table(mode: str, measure: str, unit: str, values: dict[str, float], extra: dict[str, dict]) -> None:
    columns = [
        "config",
        unit,
        "vs bare",
        "vs sdk",
        "vs its floor",
        "spans/call (Sentry: transactions)",
        "vs floor-full",
    ]
    heading(mode, measure, columns)
    for c, v in values.items():
        # A FastMCP row is set beside FastMCP's bare run and its own telemetry, not the SDK's.
        bare_of, sdk_of = ("fastmcp-bare", "fastmcp-native") if c in FASTMCP else ("bare", "sdk")
        bare, sdk = ratio(v, values, bare_of), ratio(v, values, sdk_of)
        floor = FLOOR_OF.get(c)
        against = "-"
        if floor in values:
            over = v / values[floor]
            against = f"**{over:.3f}**" if over <= TARGET else f"**{over:.3f}** (over {TARGET})"
        spans = extra[c]["sentry_per_call" if c == "sentry" else "spans_per_call"]
        required = ratio(v, values, CONVENTIONS_OF.get(c))
        print(f"| {c} | {v:,.0f} | {bare} | {sdk} | {against} | {spans:.2f} | {required} |")


def table(rounds: int, calls: int, http_calls: int, modes: tuple[str, ...], configs: tuple[str, ...]) -> None:
    print(f"Timed: CPU time per call (client and server share the process), median of {rounds} fresh-process")
    print(f"rounds, configurations interleaved round by round; wall time beside it. {machine()}")
    runs = timed_by_mode(
        rounds,
        modes,
        configs,
        lambda config, mode: _spawn(config, mode, http_calls if mode == "http" else calls),
        lambda mode: describe(mode) if "floor-payload" in configs else None,
    )
    for mode, samples in runs:
        n = http_calls if mode == "http" else calls
        cpu, last = medians(samples, "cpu_us"), {c: s[-1] for c, s in samples.items()}
        _print_table(mode, f"CPU µs per call ({n} calls, {rounds} rounds)", "CPU µs/call", cpu, last)
        wall = medians(samples, "wall_us")
        walls = ", ".join(f"{c} {wall[c]:,.0f}" for c in configs)
        spread = ", ".join(
            f"{c} {min(s['cpu_us'] for s in samples[c]):,.0f}-{max(s['cpu_us'] for s in samples[c]):,.0f}"
            for c in configs
        )
        print(f"\nwall µs/call: {walls}\n\nCPU µs/call, min-max over the rounds: {spread}")


def instructions(calls: int, http_calls: int, modes: tuple[str, ...], configs: tuple[str, ...]) -> None:
    callgrind.require_valgrind()
    print(f"Instructions per call (callgrind; start-up and warm-up not counted). {machine()}")
    if "floor-payload" in configs:
        for mode in modes:
            describe(mode)
    runs = by_mode(modes, configs, lambda mode, c: _instructions(c, mode, http_calls if mode == "http" else calls))
    for mode, results in runs:
        n = http_calls if mode == "http" else calls
        k = {c: r["instructions"] / 1000 for c, r in results.items()}
        _print_table(mode, f"instructions per call ({n} calls)", "k instr/call", k, results)


def memory(calls: int) -> None:
    print(f"peak RSS after {calls} in-memory calls (fresh process each)")
    for config in ("bare", "mcpobs"):
        for hostile in (False, True):
            peak = _spawn(config, "auto", calls, hostile=hostile, memory=True)["peak_rss_mb"]
            print(f"  {config:<8} {'unique tool names' if hostile else 'one tool name':<18} {peak:8.1f} MiB")


def _modes(only: str | None) -> tuple[str, ...]:
    if only is None:
        return MODES
    return ("auto", "legacy") if only == "memory" else (only,)


def main() -> None:
    parser = cli.parser(__doc__)
    cli.per_call(parser, CONFIGS, MODES, "auto", 7, (*MODES, "memory"), "one mode (memory: auto and legacy)")
    parser.add_argument("--hostile", action="store_true")
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--instructions", action="store_true", help="count instructions under valgrind")
    parser.add_argument("--describe", action="store_true", help="print what each configuration runs")
    parser.add_argument("--describe-spans", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--fields", type=int, help="the tool takes an object of this many fields (default: one string)")
    args = parser.parse_args()
    if args.fields:
        os.environ[FIELDS] = str(args.fields)  # the workers inherit it
        overhead_configs.ARGUMENTS = overhead_configs.arguments()
    if args.worker:
        from overhead_worker import worker  # after --fields: it reads the call's arguments as it loads

        worker(args)
        return
    configs = _available(cli.subset(parser, args.configs, CONFIGS, "configuration(s) "))
    http_calls = args.http_calls or 200
    if args.describe:
        print("| config | what runs |\n|---|---|")
        for c in CONFIGS:
            print(f"| {c} | {WHAT[c]} |")
    elif args.instructions:
        instructions(args.calls or 1000, http_calls, _modes(args.only), configs)
    elif args.memory:
        memory(args.calls or 100_000)
    else:
        table(args.rounds, args.calls or 2000, http_calls, _modes(args.only), configs)


if __name__ == "__main__":
    main()
