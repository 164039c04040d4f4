"""saturation.py --profile: where the server's main-thread time goes, by function, under cProfile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from saturation_configs import PAIRS


def _idle(key: tuple[str, int, str]) -> bool:
    """Whether a profile entry is the event loop waiting for work (a selector's poll)."""
    return key[0] == "~" and "of 'select." in key[2]


Profile = dict[tuple[str, int, str], tuple[int, int, float, float, Any]]
"""pstats' table: (file, line, function) -> (primitive calls, calls, own time, cumulative time, callers)."""


def _load_profile(path: Path) -> Profile:
    import pstats

    loaded: Any = pstats.Stats(str(path))  # its `stats` is undeclared
    stats: Profile = loaded.stats
    return {key: value for key, value in stats.items() if not _idle(key)}


def _where(key: tuple[str, int, str]) -> str:
    file, line, name = key
    if file == "~":
        return name
    parts = Path(file).parts
    for anchor in ("mcpobs", "site-packages", "lib"):  # the path from the package on
        if anchor in parts:
            return f"{'/'.join(parts[len(parts) - parts[::-1].index(anchor) :])}:{line} {name}"
    return f"{file}:{line} {name}"


def _own_table(stats: Profile, calls: int, top: int) -> list[str]:
    lines = ["| µs/call own | µs/call cumulative | calls/call | function |", "|---:|---:|---:|---|"]
    for key, v in sorted(stats.items(), key=lambda kv: -kv[1][2])[:top]:
        lines.append(f"| {v[2] / calls * 1e6:.1f} | {v[3] / calls * 1e6:.1f} | {v[1] / calls:.2f} | {_where(key)} |")
    return [*lines, ""]


def _difference_table(ours: Profile, theirs: Profile, calls: tuple[int, int], top: int) -> list[str]:
    """The functions whose own time per call grew most, whoever owns them (the OpenTelemetry SDK's too)."""
    grown = {
        key: ours.get(key, (0, 0, 0.0, 0.0, None))[2] / calls[0] - theirs.get(key, (0, 0, 0.0, 0.0, None))[2] / calls[1]
        for key in ours.keys() | theirs.keys()
    }
    lines = ["| µs/call own, difference | function |", "|---:|---|"]
    for key, diff in sorted(grown.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"| {diff * 1e6:+.1f} | {_where(key)} |")
    return [*lines, ""]


def profile_report(data: dict[str, Any], profiles: Path, top: int = 15) -> str:
    """Per mode, the main thread's time per call under cProfile: mcpobs's own functions, and what grew.

    cProfile sees the server's main thread only (the event loop: the middleware, the SDK, the
    spans' start and end), by the wall clock, less the event loop's waits in its selector; the
    exporters' threads run outside it, and the time they hold the GIL is in it. The whole life of
    the server is profiled (start-up and warm-up too), over its calls. "mcpobs's own code" is the
    time spent in functions defined in mcpobs's files (their own time, not what they call).
    """
    import mcpobs

    package = str(Path(mcpobs.__file__).resolve().parent)
    out: list[str] = []
    for mode, by_config in data["runs"].items():
        loaded = {
            config: (_load_profile(profiles / f"{mode}-{config}.prof"), raws[-1]["all_calls"])
            for config, raws in by_config.items()
            if raws and (profiles / f"{mode}-{config}.prof").exists()
        }
        for config, (stats, calls) in loaded.items():
            ours = {k: v for k, v in stats.items() if str(Path(k[0]).resolve()).startswith(package)}
            total, owned = sum(v[2] for v in stats.values()), sum(v[2] for v in ours.values())
            out += [
                f"### {mode}, {config}: {total / calls * 1e6:,.0f} µs per call in the main thread, "
                f"{owned / calls * 1e6:,.0f} µs of it in mcpobs's own code",
                "",
            ]
            out += _own_table(ours, calls, top) if ours else []
        for ours_name, theirs_name in PAIRS:
            if {ours_name, theirs_name} <= loaded.keys():
                (a, calls_a), (b, calls_b) = loaded[ours_name], loaded[theirs_name]
                diff = sum(v[2] for v in a.values()) / calls_a - sum(v[2] for v in b.values()) / calls_b
                out += [f"### {mode}: {ours_name} - {theirs_name} = {diff * 1e6:+,.0f} µs per call", ""]
                out += _difference_table(a, b, (calls_a, calls_b), top)
    return "\n".join(out)
