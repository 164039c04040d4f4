"""growth.py's curves and configurations: what each curve grows, its points, and the target."""

from __future__ import annotations

from dataclasses import dataclass

CONFIGS = ("sdk", "floor", "mcpobs")
TARGET = 1.1
RECIPE = "MCPOBS_BENCH_RECIPE"
"""What mcpobs records per operation (JSON, from `describe`), for the floor to record the same."""
CAPTURE = "MCPOBS_BENCH_CAPTURE"
"""Set: each point also says which spans and metric points its operations made (the smoke test)."""


@dataclass(frozen=True)
class Curve:
    name: str
    title: str
    x_label: str
    points: tuple[int, ...]
    quick: tuple[int, ...]
    calls: int
    """Measured operations per point (callgrind counts are exact, so few are enough)."""
    per: str = "call"


CURVES = {
    c.name: c
    for c in (
        Curve("tools", "Registered tools (calls to one of them)", "registered tools", (1, 100, 1000, 5000), (1, 5), 50),
        Curve("schema", "Schema size (one object argument)", "fields in the argument", (3, 20, 50, 200), (3, 6), 50),
        Curve("payload", "Result size", "bytes in the result", (100, 1000, 10_000, 100_000), (100, 1000), 50),
        Curve("progress", "Progress reports per call", "reports per call", (0, 1, 10, 100), (0, 2), 20),
        Curve("sessions", "Open sessions (calls spread across them)", "open sessions", (1, 10, 100), (1, 3), 100),
        Curve("listing", "tools/list, unchanged catalog", "tools listed", (10, 100, 1000, 5000), (2, 4), 4, "listing"),
        Curve(
            "listing-changed",
            "tools/list, one tool changed per listing",
            "tools listed",
            (10, 100, 1000, 5000),
            (2, 4),
            4,
            "listing",
        ),
        Curve(
            "distinct",
            "Distinct tools called in turn (round-robin, after one full cycle)",
            "tools in the cycle",
            (1000, 4096, 5000, 10_000),
            (3, 6),
            100,
        ),
    )
}
