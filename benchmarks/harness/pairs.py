"""A benchmark of pairs: each case a baseline and what is measured beside it, in the same run.

A script gives its cases (name: (baseline, measured), each a no-argument function doing one
unit of work) and its table's column names; `main` prints the Markdown table, instructions per
unit with `--instructions` (each side in a process of its own under callgrind, re-running the
script with `--one NAME WHICH`), else CPU µs per unit.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from harness import callgrind
from harness.window import Window

Cases = Callable[[], dict[str, tuple[Callable[[], object], Callable[[], object]]]]


def measure(cases: Cases, name: str, which: int, n: int) -> float:
    """Instructions per unit under callgrind (this process runs under it), else CPU µs."""
    run = cases()[name][which]
    for _ in range(50):
        run()  # warm caches, an lru_cache included
    with Window(callgrind.client(), settle=False) as window:
        for _ in range(n):
            run()
    return window.cpu / n * 1e6


def _under_callgrind(script: str, name: str, which: int, n: int) -> float:
    command = [sys.executable, script, "--one", name, str(which)]
    _, total = callgrind.counted_once(command, dict(os.environ), f"{name} ({which})")
    return total / n


def main(cases: Cases, script: str, n: int, columns: tuple[str, str, str]) -> None:
    """`columns`: the case's, the baseline's and the measured side's names in the table's header."""
    if sys.argv[1:2] == ["--one"]:
        measure(cases, sys.argv[2], int(sys.argv[3]), n)
        return
    counted = "--instructions" in sys.argv
    unit = "instructions" if counted else "CPU µs"
    first, baseline, measured = columns
    print(f"| {first} | {baseline} ({unit}) | {measured} ({unit}) | ratio |")
    print("|---|---:|---:|---:|")
    for name in cases():
        before, after = (
            _under_callgrind(script, name, i, n) if counted else measure(cases, name, i, n) for i in (0, 1)
        )
        digits = 0 if counted else 2
        print(f"| {name} | {before:,.{digits}f} | {after:,.{digits}f} | {after / before:.2f} |")
