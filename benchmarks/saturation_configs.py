"""saturation.py's modes, configurations and goals, shared by its driver, its three roles and its report."""

from __future__ import annotations

MODES = ("http-auto", "http-legacy", "stdio")
CONFIGS = ("bare", "sdk-server", "floor-server", "mcpobs-server", "mcpobs-server-lean", "sdk", "mcpobs")
PAIRS = (
    ("mcpobs-server", "sdk-server"),
    ("mcpobs-server", "floor-server"),
    ("mcpobs-server-lean", "sdk-server"),
    ("mcpobs", "sdk"),
)
LEAN = ("peer", "contract")
"""The attribute groups `mcpobs-server-lean` omits: every call's per-session facts (docs/privacy.md)."""
SIGNALS = ("traces", "metrics")
SIDES = ("server", "client")
GOAL_THROUGHPUT, GOAL_COST = 0.97, 1.05
METRIC_INTERVAL_MS = 5000
