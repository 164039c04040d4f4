"""saturation.py's figures, derived from the raw runs (so --from-json recomputes them), and its tables."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator
from typing import Any

from saturation_configs import GOAL_COST, GOAL_THROUGHPUT, PAIRS, SIDES, SIGNALS


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


def bytes_per_call(figures: dict[str, float], signal_name: str) -> float:
    """Bytes per call of one signal ("traces", "metrics", or "fail": span bytes per failing call), both sides."""
    return sum(figures[f"{signal_name}_bytes_{side}"] for side in SIDES)


def brief(f: dict[str, float]) -> str:
    return (
        f"{f['calls_per_s']:.0f} calls/s, p50 {f['p50_ms']:.1f} ms, p99 {f['p99_ms']:.1f} ms, "
        f"server {f['server_cpu_us']:.0f} µs/call, client {f['client_cpu_us']:.0f} µs/call, "
        f"spans {bytes_per_call(f, 'traces'):.0f} B/call, metrics {bytes_per_call(f, 'metrics'):.0f} B/call"
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
    ("span bytes per call", lambda f: bytes_per_call(f, "traces"), None),
    ("span bytes per failing call", lambda f: bytes_per_call(f, "fail"), None),
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
