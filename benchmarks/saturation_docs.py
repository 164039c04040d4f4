"""saturation.py's written outputs: the SVG plot, the section of docs/benchmarks.md, the README rows."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.docs import paragraph
from harness.markers import replace_between
from harness.svg import bars
from saturation_configs import CONFIGS, GOAL_COST, GOAL_THROUGHPUT
from saturation_figures import bytes_per_call, mode_table, ratio_cell, ratio_table, summaries

SVG_OUT = Path("docs/images/saturation.svg")  # these three, and JSON_OUT, under --root (default: the checkout)
DOCS = Path("docs/benchmarks.md")
README = Path("README.md")
DOCS_MARKERS = ("<!-- saturation:begin (benchmarks/saturation.py --write-docs) -->", "<!-- saturation:end -->")
README_MARKERS = (
    "<!-- saturation-table:begin (benchmarks/saturation.py --write-docs) -->",
    "<!-- saturation-table:end -->",
)


def plot(data: dict[str, Any]) -> str:
    by_mode = summaries(data)
    configs = [c for c in CONFIGS if any(c in figures for figures in by_mode.values())]
    series: dict[str, Sequence[float]] = {
        c: [by_mode[m].get(c, {}).get("calls_per_s", 0.0) for m in by_mode] for c in configs
    }
    title = f"Throughput at saturation, {data['clients']} callers, exporting OTLP/HTTP"
    return bars(title, "tools/call per second", list(by_mode), series)


def section(data: dict[str, Any], svg: Path, docs: Path) -> str:
    """The saturation section of docs/benchmarks.md (the plot at `svg`, linked relative to `docs`)."""
    rel = os.path.relpath(svg, docs.parent)
    out = [
        "## Throughput at saturation, with real export (issue 42)",
        "",
        paragraph(
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
        paragraph(
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
        paragraph(
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
        ours, theirs = bytes_per_call(f["mcpobs"], signal_name), bytes_per_call(f["sdk"], signal_name)
        return f"{ours:,.0f} / {theirs:,.0f} ({ours / theirs:.2f}x)" if theirs else f"{ours:,.0f} / 0"

    for signal_name, what in (("traces", "an ok call"), ("fail", "a failing call")):
        cells = [span_bytes(f, signal_name) for f in by_mode.values()]
        rows.append(f"| span bytes of {what} (both sides), `instrument()` / the SDK's | {' | '.join(cells)} |")
    metric = [f"{bytes_per_call(f['mcpobs'], 'metrics'):,.0f}" if "mcpobs" in f else "-" for f in by_mode.values()]
    rows.append(
        f"| metric bytes per call, `instrument()` (one export per {data['metric_interval_s']:g} s) | {' | '.join(metric)} |"
    )
    return head + "\n" + "\n".join(rows) + "\n"


def write_docs(data: dict[str, Any], root: Path) -> None:
    svg, docs = root / SVG_OUT, root / DOCS
    svg.parent.mkdir(parents=True, exist_ok=True)
    svg.write_text(plot(data))
    replace_between(docs, DOCS_MARKERS, section(data, svg, docs))
    replace_between(root / README, README_MARKERS, readme_rows(data))
