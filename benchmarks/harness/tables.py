"""The Markdown tables the per-call benchmarks print, so docs/benchmarks.md takes them as they are."""

from __future__ import annotations

from collections.abc import Sequence


def heading(mode: str, measure: str, columns: Sequence[str]) -> None:
    """A mode's table head: its title line, then the columns, the first left-aligned, numbers right."""
    print(f"\n#### {mode}: {measure}\n")
    print(f"| {' | '.join(columns)} |")
    print("|---|" + "---:|" * (len(columns) - 1))


def ratio(value: float, values: dict[str, float], of: str | None) -> str:
    """`value` over configuration `of`'s, to three places; "-" where that configuration did not run."""
    return f"{value / values[of]:.3f}" if of in values else "-"
