"""`mcpobs contract diff`'s cost lines and budget: what each tool adds to a model's context, and the gate.

Sizes are computed from the snapshots' tools (`_core/cost.py`: the compact JSON of name,
description and inputSchema), never read from a snapshot's stored numbers, so a snapshot taken
before they were recorded diffs all the same, and both sides are counted by one method.

The budget fails a release whose catalog is over a whole-catalog token limit (`--token-budget`)
or grew by more than a per-release limit (`--max-growth`, tokens or a percentage of the old
catalog). Its exit status (`OVER_BUDGET`) is its own: a budget is the team's choice, not a
compatibility break.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcpobs._cli import CommandError
from mcpobs._cli.render import printable
from mcpobs._core import cost

NAME_SHOWN = 200
"""As `contract diff`'s change lines show a tool's name: escaped, and at most this long."""

OVER_BUDGET = 3
"""`contract diff`'s exit status when nothing breaks but the catalog is over its budget."""


@dataclass(frozen=True)
class Budget:
    tokens: int | None = None
    """The whole new catalog's tokens may not exceed this."""
    growth: float | None = None
    """How much the catalog may grow from old to new: tokens, or a fraction of the old when `relative`."""
    relative: bool = False

    def __bool__(self) -> bool:
        return self.tokens is not None or self.growth is not None


def parse_budget(token_budget: str | None, max_growth: str | None) -> Budget:
    """The options as given on the command line; a `CommandError` saying how to write them."""
    tokens = None
    if token_budget is not None:
        if not token_budget.strip().isdigit():
            raise CommandError(f"--token-budget {token_budget!r}: give a whole number of tokens, e.g. 8000")
        tokens = int(token_budget)
    growth, relative = None, False
    if max_growth is not None:
        found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(%?)\s*", max_growth)
        if not found:
            raise CommandError(f"--max-growth {max_growth!r}: give tokens (e.g. 500) or a percentage (e.g. 10%)")
        growth, relative = float(found.group(1)), bool(found.group(2))
        if relative:
            growth /= 100
    return Budget(tokens, growth, relative)


def _n(value: int, sign: bool = False) -> str:
    return f"{value:+,}" if sign else f"{value:,}"


def _tokens(value: int, counter: cost.TokenCounter, sign: bool = False) -> str:
    if counter.method == cost.ESTIMATE:
        return f"about {_n(value, sign)} tokens"
    return f"{_n(value, sign)} {counter.method} tokens"


def _by_name(snapshot: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {t["name"]: t for t in snapshot.get("tools", [])}


@dataclass(frozen=True)
class Report:
    lines: list[str]
    over_budget: bool


def report(
    old: Mapping[str, Any], new: Mapping[str, Any], counter: cost.TokenCounter, budget: Budget = Budget()
) -> Report:
    """One line per tool whose size moved, the totals before and after, and the budget's verdict."""
    before, after = _by_name(old), _by_name(new)
    growth: dict[str, int] = {}
    lines: list[str] = []
    for name in sorted(before.keys() | after.keys()):
        was, now = before.get(name), after.get(name)
        tokens_was = counter.count(cost.tool_json(was)) if was is not None else 0
        tokens_now = counter.count(cost.tool_json(now)) if now is not None else 0
        fields_was = cost.field_bytes(was) if was is not None else {}
        fields_now = cost.field_bytes(now) if now is not None else {}
        if was is None or now is None:
            size = len(cost.tool_json(now if now is not None else was))  # type: ignore[arg-type]
            parts = [f"{'added' if was is None else 'removed'} {_n(size if was is None else -size, True)} bytes"]
        else:
            parts = [
                f"{key} {_n(fields_now[key] - fields_was[key], True)} bytes"
                for key in cost.SHOWN
                if fields_now[key] != fields_was[key]
            ]
            if not parts:
                continue
        delta = tokens_now - tokens_was
        growth[name] = delta
        verb = "grew" if delta > 0 or (delta == 0 and sum(fields_now.values()) > sum(fields_was.values())) else "shrank"
        lines.append(f"{verb}: {printable(name, NAME_SHOWN)}: {', '.join(parts)}, {_tokens(delta, counter, True)}")
    total_was, total_now = _total(before.values(), counter), _total(after.values(), counter)
    if total_was == total_now and len(before) == len(after):
        lines.append(
            f"catalog: {_n(total_now[0])} bytes, {_tokens(total_now[1], counter)}, {len(after)} tools: unchanged"
        )
    else:
        lines.append(
            f"catalog: {_n(total_was[0])} bytes, {_tokens(total_was[1], counter)} -> {_n(total_now[0])} bytes, "
            f"{_tokens(total_now[1], counter)} ({_n(total_now[0] - total_was[0], True)} bytes, "
            f"{_tokens(total_now[1] - total_was[1], counter, True)}; {len(before)} -> {len(after)} tools)"
        )
    verdicts = _verdicts(total_was[1], total_now[1], growth, counter, budget)
    return Report(lines + verdicts, bool(verdicts))


def _total(tools: Any, counter: cost.TokenCounter) -> tuple[int, int]:
    texts = [cost.tool_json(t) for t in tools]
    return sum(len(t) for t in texts), sum(counter.count(t) for t in texts)


def _verdicts(was: int, now: int, growth: Mapping[str, int], counter: cost.TokenCounter, budget: Budget) -> list[str]:
    grown = [name for name, delta in sorted(growth.items(), key=lambda kv: (-kv[1], kv[0])) if delta > 0]
    named = ", ".join(f"{printable(name, NAME_SHOWN)} {_n(growth[name], True)}" for name in grown) or "no tool grew"
    found: list[str] = []
    if budget.tokens is not None and now > budget.tokens:
        found.append(
            f"over budget: the catalog is {_tokens(now, counter)}, over the budget of {_n(budget.tokens)}; "
            f"tools that grew: {named}"
        )
    if budget.growth is not None:
        limit = math.floor(was * budget.growth) if budget.relative else int(budget.growth)
        if now - was > limit:
            shown = f"{budget.growth:.0%} ({_n(limit)} tokens)" if budget.relative else f"{_n(limit)} tokens"
            found.append(
                f"over budget: the catalog grew by {_tokens(now - was, counter, True)}, over the limit of {shown}; "
                f"tools that grew: {named}"
            )
    return found


def costed(tools: Sequence[dict[str, Any]], counter: cost.TokenCounter = cost.ESTIMATOR) -> dict[str, Any]:
    """A snapshot's tools with each one's cost, and the catalog's (what `contract snapshot` records)."""
    for tool in tools:
        text = cost.tool_json(tool)
        tool["cost"] = {"bytes": len(text), "tokens": counter.count(text)}
    total = cost.catalog_cost(tools, counter)
    return {
        "tools": list(tools),
        "cost": {"bytes": total.bytes, "tokens": total.tokens, "tools": total.tools, "tokenMethod": counter.method},
    }
