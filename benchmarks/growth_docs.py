"""growth.py's written outputs: a table and an SVG plot per curve, the docs section, the README rows."""

from __future__ import annotations

import os
from pathlib import Path

from growth_curves import CONFIGS, CURVES, TARGET
from harness import svg
from harness.markers import replace_between

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
DOCS = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- growth:begin (benchmarks/growth.py --write-docs) -->", "<!-- growth:end -->"


def _values(data: dict, curve: str, config: str, measure: str) -> list[float]:
    return [p[measure] for p in data["curves"][curve][config]["points"]]


def _fmt(value: float) -> str:
    return f"{value / 1000:,.0f}k" if abs(value) >= 10_000 else f"{value:,.0f}"


def curve_table(data: dict, name: str) -> str:
    """Per point: the three counts, mcpobs over the floor, what each adds to the SDK, and the slopes.

    "Added" is a configuration minus `sdk`: the telemetry's own cost, without the SDK's work it
    rides on (a 5,000-tool listing is 1.3G instructions of the SDK's own). A slope is the cost
    of one more unit of the growing quantity between this point and the one before; where the
    floor's step is under 1% of it (flat), the ratio of two near-zero slopes says nothing, so the
    cell gives what mcpobs's step adds instead.
    """
    measure = data["measure"]
    curve = CURVES[name]
    xs = [p["x"] for p in data["curves"][name]["sdk"]["points"]]
    sdk, floor, ours = (_values(data, name, c, measure) for c in CONFIGS)
    unit = "instructions" if measure == "instructions" else "CPU µs"
    lines = [
        f"| {curve.x_label} | sdk | floor | mcpobs | mcpobs / floor | floor adds | mcpobs adds | adds ratio "
        "| floor slope | mcpobs slope | slope ratio |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, x in enumerate(xs):
        ratio = ours[n] / floor[n]
        added_floor, added_ours = floor[n] - sdk[n], ours[n] - sdk[n]
        # a floor within 1% of the SDK adds less than the SDK's own spread between runs: no ratio then
        added = f"{added_ours / added_floor:.2f}" if added_floor > 0.01 * sdk[n] else "floor ≈ sdk"
        if n == 0:
            slopes = "| - | - | - |"
        else:
            dx = x - xs[n - 1]
            fs, ms = (floor[n] - floor[n - 1]) / dx, (ours[n] - ours[n - 1]) / dx
            if abs(floor[n] - floor[n - 1]) > 0.01 * floor[n - 1]:
                good = ms / fs <= TARGET
                slope_ratio = f"**{ms / fs:.2f}**" if good else f"**{ms / fs:.2f}** (over {TARGET})"
            else:
                step = (ours[n] - ours[n - 1]) - (floor[n] - floor[n - 1])
                slope_ratio = f"flat floor; mcpobs's step {'+' if step >= 0 else ''}{_fmt(step)}"
            slopes = f"| {_fmt(fs)} | {_fmt(ms)} | {slope_ratio} |"
        lines.append(
            f"| {x:,} | {_fmt(sdk[n])} | {_fmt(floor[n])} | {_fmt(ours[n])} | {ratio:.3f} "
            f"| {_fmt(added_floor)} | {_fmt(added_ours)} | {added} {slopes}"
        )
    per = "listing" if curve.per == "listing" else "call"
    return f"{unit} per {per}; slopes per one more of: {curve.x_label}\n\n" + "\n".join(lines)


def plot(data: dict, name: str) -> str:
    measure = data["measure"]
    curve = CURVES[name]
    xs = [p["x"] for p in data["curves"][name]["sdk"]["points"]]
    shifted = min(xs) == 0  # progress starts at 0 reports: a log axis over reports + 1, ticked with reports
    xs_plot = [x + 1 for x in xs] if shifted else xs
    per = "listing" if curve.per == "listing" else "call"
    y = ("instructions" if measure == "instructions" else "CPU µs") + f" per {per}"
    x_label = curve.x_label + (" (axis at reports + 1)" if shifted else "")
    series = {c: _values(data, name, c, measure) for c in CONFIGS}
    return svg.chart(curve.title, x_label, y, xs_plot, series, [svg.label(x) for x in xs])


HOW = {
    "tools": "Tools registered on the server (copies of `echo` under new names); every call is to `echo`.",
    "schema": "The tool takes one object argument of that many string fields, and every call sends all of them.",
    "payload": "The tool returns a string of that many bytes.",
    "progress": "The tool reports progress that many times per call; the client passes a progress callback. "
    "The floor makes, per report, one `progress` span (a child of the request's span) carrying "
    "mcpobs's progress attributes, and one count of `mcpobs.progress.reports` with mcpobs's labels.",
    "sessions": "That many `Client(server)` sessions open at once, the calls spread across them in turn.",
    "listing": "One `tools/list` (the client's cache bypassed) of a catalog that does not change between "
    "listings: the floor is the SDK plus the listing's spans and metric records, nothing per tool.",
    "listing-changed": "The same, with one tool replaced by a copy with a new description before each "
    "listing; the floor adds one canonical encoding and hash of the changed tool "
    "(`mcpobs._core.contract.contract_fingerprint`).",
    "distinct": "That many tools called round-robin, measured after one full cycle (every tool seen "
    "once): past any internal cache bound, each call is one the cache has forgotten.",
}


def section(data: dict, images: Path = IMAGES) -> str:
    """The "Growth curves" section of docs/benchmarks.md, with the plots written beside it."""
    out = [
        "## Growth curves",
        "",
        "`benchmarks/growth.py` grows one quantity at a time and measures, at each point, the SDK's own",
        "spans (`sdk`), the floor (`floor`: the same spans, attributes and metric records mcpobs makes,",
        "written with plain OpenTelemetry code) and `instrument()` (`mcpobs`), in memory (mode auto).",
        "A slope is the cost of one more unit of the growing quantity between two points; the target",
        f"is mcpobs's slope within {TARGET}x the floor's at each point (issue 31). Where the floor is",
        "flat the ratio of two near-zero slopes says nothing, so the table gives mcpobs's step instead.",
        '"Adds" is a configuration minus `sdk`: what the telemetry itself costs, without the SDK\'s own',
        "work it rides on, and \"adds ratio\" is mcpobs's over the floor's. The floor's attributes and",
        "records are read from one mcpobs worker before the run, and the smoke test",
        "(`tests/test_benchmark.py`) checks the floor emits the same span names and attribute keys, metric",
        "names and label keys, as many times, as mcpobs. Its server records are made in a server middleware",
        "(the server's duration timed around the server's handling), its client records around the call;",
        "its counters are `ObservableCounter`s over running totals kept under a lock, the cheapest way this",
        "OpenTelemetry SDK counts (a synchronous `Counter.add` re-hashes its labels on every call); the",
        "recipe is overhead.py's `floor-payload`. A full collection and `gc.freeze()` precede each point.",
        "",
        "```bash",
        "python benchmarks/growth.py --instructions --write-docs --write-readme  # the run, this section, the README rows",
        "python benchmarks/growth.py --from-json benchmarks/results/growth.json --write-docs  # again from the JSON",
        "python benchmarks/growth.py --instructions --curves progress,listing",
        "```",
        "",
        f"Measured on: {data['machine']}. Run time: {data['seconds'] / 60:.1f} min"
        + (" (quick points)." if data.get("quick") else "."),
        "",
    ]
    images.mkdir(parents=True, exist_ok=True)
    for name in [n for n in CURVES if n in data["curves"]]:  # in CURVES order, whatever order they finished in
        image = images / f"growth-{name}.svg"
        image.write_text(plot(data, name))
        rel = os.path.relpath(image, DOCS.parent)
        title = CURVES[name].title
        out += [f"### {title}", "", HOW[name], "", f"![{title}]({rel})", "", curve_table(data, name), ""]
    return "\n".join(out).rstrip() + "\n"


def write_docs(text: str, docs: Path = DOCS) -> None:
    replace_between(docs, (BEGIN, END), text, append=True)


README_BEGIN, README_END = (
    "<!-- growth-table:begin (benchmarks/growth.py --write-readme) -->",
    "<!-- growth-table:end -->",
)
README = ROOT / "README.md"


def readme_rows(data: dict) -> str:
    """The README's cost rows that come from the growth run: the largest point of each curve."""
    measure, curves = data["measure"], data["curves"]
    unit = "k instr" if measure == "instructions" else "µs"

    def cells(values: list[float]) -> str:
        sdk, floor, ours = values
        shown = [f"{v / 1000:,.0f}" if measure == "instructions" else f"{v:,.0f}" for v in values]
        over = ours - sdk
        plus = f"{over / 1000:,.0f}k" if measure == "instructions" else f"{over:,.0f} µs"
        adds = f"{over / (floor - sdk):.2f}x" if floor - sdk > 0.01 * sdk else f"floor ≈ SDK; mcpobs +{plus}"
        return f"{shown[0]} | {shown[1]} | {shown[2]} | {ours / floor:.2f}x | {adds}"

    rows = []
    if "tools" in curves:
        first = [_values(data, "tools", c, measure)[0] for c in CONFIGS]
        rows.append(f"| a trivial call (one tool registered) | {cells(first)} |")
    at = {
        "tools": "a call with {x:,} tools registered",
        "schema": "a call with a {x:,}-field argument",
        "payload": "a call returning {x:,} bytes",
        "sessions": "a call with {x:,} sessions open",
        "distinct": "a call cycling through {x:,} distinct tools",
        "listing": "`tools/list` of {x:,} tools, unchanged",
        "listing-changed": "`tools/list` of {x:,} tools, one changed",
    }
    if "progress" in curves:
        xs = [p["x"] for p in curves["progress"]["sdk"]["points"]]
        per = [_values(data, "progress", c, measure) for c in CONFIGS]
        slope = [(v[-1] - v[-2]) / (xs[-1] - xs[-2]) for v in per]
        rows.append(f"| one progress report ({xs[-2]} to {xs[-1]} per call) | {cells(slope)} |")
    for name, label in at.items():
        if name in curves:
            x = curves[name]["sdk"]["points"][-1]["x"]
            rows.append(f"| {label.format(x=x)} | {cells([_values(data, name, c, measure)[-1] for c in CONFIGS])} |")
    head = (
        f"| work ({unit}, in memory, mode auto) | SDK | floor | mcpobs | mcpobs / floor "
        "| mcpobs's cost over the SDK / the floor's |\n|---|---:|---:|---:|---:|---:|"
    )
    return head + "\n" + "\n".join(rows) + "\n"


def write_readme(text: str, readme: Path = README) -> None:
    replace_between(readme, (README_BEGIN, README_END), text)
