"""How mcpobs's cost grows with the work, beside the SDK's and beside the floor, in one run.

Each curve grows one quantity (registered tools, schema size, result size, progress reports
per call, open sessions, listing size, distinct tools called in turn) and measures, at each
point, the instructions per call (or per listing) of three configurations, in memory with
`Client(server)` (mode auto):

- `sdk`: the SDK's own spans, nothing else;
- `floor`: the telemetry mcpobs records, written with plain OpenTelemetry code: the SDK's spans
  carrying every attribute mcpobs's spans carry (added by a span processor, one batch per span,
  as overhead.py's `floor-payload`), the CLIENT span mcpobs adds in mode auto, one `progress`
  span and the progress count per report, and every metric record mcpobs makes per call, per
  listing and per report, with the same labels: the server's records in a server middleware
  (the server's duration is timed around the server's handling, as in overhead.py), the
  client's around the call, the counts under a lock. What it records is read, before the run, from
  one mcpobs worker (`describe`); the smoke test checks the floor emits the same span names,
  attribute keys, metric names and label keys as mcpobs. A listing with one tool changed adds
  one canonical encoding and hash of that tool (`mcpobs._core.contract`), the least any
  catalog fingerprint must do;
- `mcpobs`: `instrument()`.

One worker per (configuration, curve) measures every point of the curve in turn, so valgrind's
start-up is paid once: under callgrind the worker starts instrumentation, zeroes the counts,
runs the point's calls and dumps them (one dump file per point). The slope between two points
is the marginal cost of the growing quantity; mcpobs's slope over the floor's is the target
(at most 1.1x at each point, issue 31).

    python benchmarks/growth.py --instructions                 # every curve, callgrind (~20 min)
    python benchmarks/growth.py --instructions --curves progress,listing
    python benchmarks/growth.py --quick                         # tiny points, timed: a smoke run
    python benchmarks/growth.py --from-json benchmarks/results/growth.json --write-docs
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from growth_curves import CAPTURE, CONFIGS, CURVES, RECIPE, Curve
from growth_docs import IMAGES, readme_rows, section, write_docs, write_readme
from harness import callgrind, cli
from harness.docs import save_json
from harness.machine import machine
from harness.workers import clean_env, result, run_worker

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
JSON_OUT = HERE / "results" / "growth.json"


# -- driver ------------------------------------------------------------------------------------------


def _env(recipe: str | None, capture: bool) -> dict[str, str]:
    env = clean_env()
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), str(ROOT / "src")) if p)
    if recipe:
        env[RECIPE] = recipe
    if capture:
        env[CAPTURE] = "1"
    return env


def describe() -> str:
    command = [sys.executable, __file__, "--worker", "mcpobs", "--describe"]
    return json.dumps(run_worker(command, _env(None, False), "describing mcpobs's telemetry"))


def measure(config: str, plan: list, recipe: str, counted: bool, capture: bool) -> dict:
    """One worker: every point of the curves in `plan` for `config`; counted: under callgrind, one dump per point."""
    cmd = [sys.executable, __file__, "--worker", config, "--plan", json.dumps(plan)]
    env = _env(recipe if config == "floor" else None, capture)
    what = f"{config} ({', '.join(c for c, _, _ in plan)})"
    started = time.perf_counter()
    if not counted:
        found = run_worker(cmd, env, what)
    else:
        stderr, totals = callgrind.counted(cmd, env, what)
        found = result(stderr)
        points = [p for c, _, _ in plan for p in found["curves"][c]["points"]]
        if len(totals) != len(points):
            raise RuntimeError(f"callgrind dumped {len(totals)} times for {len(points)} points for {what}")
        for point, total in zip(points, totals, strict=True):
            point["instructions"] = total / point["ops"]
    seconds = time.perf_counter() - started
    return {name: {**curve, "seconds": seconds} for name, curve in found["curves"].items()}


def run(curves: list[Curve], quick: bool, counted: bool, capture: bool, save: Path | None = None) -> dict:
    """Every (curve, configuration) worker, two at a time; with `save`, the JSON is rewritten as each curve completes."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    started = time.perf_counter()
    recipe = describe()
    data = {
        "machine": machine(),
        "measure": "instructions" if counted else "cpu_us",
        "quick": quick,
        "seconds": 0.0,
        "recipe": json.loads(recipe),
        "curves": {},
    }
    done: dict[str, dict] = {c.name: {} for c in curves}
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        jobs = {}

        def plan(curve: Curve) -> list:
            return [curve.name, curve.quick if quick else curve.points, min(curve.calls, 5) if quick else curve.calls]

        # counted: a worker per (curve, configuration), the costliest curves first, so the two
        # cores finish together; timed (a smoke run): a worker per configuration, every curve in it
        ordered = sorted(curves, key=lambda c: c.name not in ("distinct", "listing", "listing-changed"))
        plans = [[plan(c)] for c in ordered] if counted else [[plan(c) for c in ordered]]
        for p in plans:
            for config in CONFIGS:
                jobs[pool.submit(measure, config, p, recipe, counted, capture)] = config
        for job in as_completed(jobs):
            config = jobs[job]
            try:
                found = job.result()
            except Exception as failed:  # one worker failing leaves the others' numbers
                print(f"{config} failed: {failed}", file=sys.stderr)
                continue
            for name, result in found.items():
                done[name][config] = result
                if len(done[name]) == len(CONFIGS):
                    data["curves"][name] = {c: done[name][c] for c in CONFIGS}
                    data["seconds"] = time.perf_counter() - started
                    print(f"{name}: done after {data['seconds']:.0f} s", file=sys.stderr)
                    if save:
                        save_json(save, data)
    data["curves"] = {c.name: data["curves"][c.name] for c in curves if c.name in data["curves"]}
    return data


def main() -> None:
    parser = cli.parser(__doc__)
    parser.add_argument("--worker", choices=CONFIGS)
    parser.add_argument("--plan", help=argparse.SUPPRESS)
    parser.add_argument("--describe", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--curves", help="comma-separated subset of: " + ", ".join(CURVES))
    parser.add_argument("--quick", action="store_true", help="two tiny points per curve, 5 operations each")
    parser.add_argument("--instructions", action="store_true", help="count instructions under valgrind")
    parser.add_argument("--capture", action="store_true", help="record what each configuration emits (smoke test)")
    parser.add_argument("--json", type=Path, help=f"where the raw numbers go (default {JSON_OUT.relative_to(ROOT)})")
    parser.add_argument("--images", type=Path, default=IMAGES, help="where the SVG plots go")
    parser.add_argument("--from-json", type=Path, help="no run: tables, plots and docs from a saved run")
    parser.add_argument("--write-docs", action="store_true", help="rewrite the growth section of docs/benchmarks.md")
    parser.add_argument("--write-readme", action="store_true", help="rewrite the growth rows of README's cost table")
    args = parser.parse_args()
    if args.worker:
        from growth_worker import worker

        worker(args)
        return
    if args.from_json:
        data = json.loads(args.from_json.read_text())
    else:
        names = cli.subset(parser, args.curves, list(CURVES), "curve(s) ")
        if args.instructions:
            callgrind.require_valgrind()
        out = args.json or (JSON_OUT if args.instructions and not args.quick else None)
        data = run([CURVES[n] for n in names], args.quick, args.instructions, args.capture, out)
    text = section(data, args.images)
    print(text)
    if args.write_docs:
        write_docs(text)
    if args.write_readme:
        write_readme(readme_rows(data))


if __name__ == "__main__":
    main()
