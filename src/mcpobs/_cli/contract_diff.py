"""`mcpobs contract snapshot|diff`: what a release changes in the tools clients depend on.

A snapshot is the server's tools as `tools/list` sends them. The diff walks two snapshots
and classifies each change for both directions of a rolling release (old clients calling
the new server, and new clients calling an old replica):

- breaking: a removed tool; a removed, renamed or retyped field; a new required input; a
  narrowed input enum or widened output enum; a removed input (old callers' arguments are
  then dropped silently); a new optional input when the old schema forbids additional
  properties (a new client's call fails on an old replica); a new output field when the old
  output schema forbids additional properties (old clients reject new results);
- additive: a new tool, a new optional input, a new output field, a widened input type;
- safe: wording (title, description, annotations) — it still moves the contract
  fingerprint, because it changes what a model picks.

Schemas are checked by the dialect they declare (`$schema`), 2020-12 when none, as the
base protocol requires.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

from mcpobs._cli import CommandError, candidate, contract_cost, schemas
from mcpobs._cli.candidate import CLOSED_BY, check_target, reason, snapshot
from mcpobs._cli.contract_cost import NAME_SHOWN, OVER_BUDGET, parse_budget
from mcpobs._cli.render import printable
from mcpobs._cli.schemas import Verdict
from mcpobs._cli.stores.reading import MAX_BYTES, within
from mcpobs._core import cost

_ORDER = {"breaking": 0, "additive": 1, "safe": 2}
_WHAT_SHOWN = 600
MAX_SNAPSHOT_DEPTH = 64
"""How deeply a snapshot may nest (its tools' schemas at most 30 levels of properties): deeper is
none a server serves in earnest, and checking it would exhaust the interpreter's stack."""


@dataclass(frozen=True)
class Change:
    verdict: Verdict
    tool: str
    what: str

    def __str__(self) -> str:
        # The tool's name and the fields in `what` are what a server wrote: escaped, so a name
        # cannot clear the terminal, forge a verdict line or reorder what is shown.
        return f"{self.verdict}: {printable(self.tool, NAME_SHOWN)}: {printable(self.what, _WHAT_SHOWN)}"


# -- diff ------------------------------------------------------------------------------------


def diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    """Every change from snapshot `old` to snapshot `new`, breaking first."""
    old_tools = {t["name"]: t for t in old.get("tools", [])}
    new_tools = {t["name"]: t for t in new.get("tools", [])}
    changes: list[Change] = []
    for name in old_tools.keys() - new_tools.keys():
        changes.append(Change("breaking", name, "tool removed"))
    for name in new_tools.keys() - old_tools.keys():
        changes.append(Change("additive", name, "tool added"))
    closed_by = old.get(CLOSED_BY) if isinstance(old.get(CLOSED_BY), str) else None
    for name in old_tools.keys() & new_tools.keys():
        changes.extend(_tool_changes(name, old_tools[name], new_tools[name], closed_by))
    return sorted(changes, key=lambda c: (_ORDER[c.verdict], c.tool, c.what))


def _tool_changes(
    name: str, old: Mapping[str, Any], new: Mapping[str, Any], closed_by: str | None = None
) -> Iterator[Change]:
    for key in ("inputSchema", "outputSchema"):
        for schema in (old.get(key), new.get(key)):
            problem = schemas.problem(schema)
            if problem:
                yield Change("breaking", name, f"{key} is not a valid schema: {problem}")
    for field in ("title", "description", "annotations"):
        if old.get(field) != new.get(field):
            yield Change("safe", name, f"{field} changed (moves the contract fingerprint)")
    for direction, key in (("input", "inputSchema"), ("output", "outputSchema")):
        before, after = old.get(key), new.get(key)
        if before is None and after is None:
            continue
        if before is None or after is None:
            verdict: Verdict = "additive" if before is None else "breaking"
            yield Change(verdict, name, f"{direction} schema {'added' if before is None else 'removed'}")
            continue
        yield from (
            Change(v, name, f"{direction} {what}")
            for v, what in schemas.walk(direction, "", before, after, before, after, closed_by=closed_by)  # type: ignore[arg-type]
        )


# -- command line ------------------------------------------------------------------------------


def main_snapshot(target: str) -> str:
    return json.dumps(_snapshot_of(target), indent=2, sort_keys=True)


def main_diff(
    old: str, new: str, token_budget: str | None = None, max_growth: str | None = None, encoding: str | None = None
) -> tuple[str, int]:
    """`old` and `new` are snapshot files, or (for a snapshot taken now) a module:attribute or a URL.

    Exit status: 1 when anything breaks, else `OVER_BUDGET` when the catalog is over its budget, else 0.
    """
    budget = parse_budget(token_budget, max_growth)
    try:
        counter = cost.counter(encoding)
    except cost.EncodingUnavailable as exc:
        raise CommandError(f"--encoding: {exc}") from None
    before, after = _bounded(_read(old), old), _bounded(_read(new), new)
    changes = diff(before, after)
    sized = contract_cost.report(before, after, counter, budget)
    lines = [str(c) for c in changes] or ["no changes"]
    status = 1 if any(c.verdict == "breaking" for c in changes) else OVER_BUDGET if sized.over_budget else 0
    return "\n".join(lines + sized.lines), status


def _bounded(snapshot: Mapping[str, Any], argument: str) -> Mapping[str, Any]:
    if not within(snapshot, MAX_SNAPSHOT_DEPTH):
        raise CommandError(
            f"{printable(argument)}: nested deeper than {MAX_SNAPSHOT_DEPTH} levels, which no tool schema needs; "
            "give a snapshot of a server's tools"
        )
    return snapshot


def _snapshot_of(target: str) -> dict[str, Any]:
    import anyio

    if "://" not in target:
        check_target(target)
        return candidate.listed(target)
    try:
        return anyio.run(snapshot, target)
    except CommandError:
        raise
    except Exception as exc:
        where = f"the server at {target}" if "://" in target else f"the server {target}"
        raise CommandError(f"could not list the tools of {where}: {reason(exc)}") from exc


def _read(argument: str) -> Mapping[str, Any]:
    """A snapshot from a file (what `contract snapshot` printed), or taken now from a server."""
    from pathlib import Path

    path = Path(argument)
    if not path.exists():
        if "://" in argument or (":" in argument and not argument.endswith(".json")):
            return _snapshot_of(argument)
        raise CommandError(
            f"{printable(argument)}: no such file (give a file `mcpobs contract snapshot` wrote, or a server)"
        )
    shown = printable(argument)
    try:
        if path.stat().st_size > MAX_BYTES:
            raise CommandError(
                f"{shown}: larger than {MAX_BYTES // 2**20} MiB; give a file `mcpobs contract snapshot` wrote"
            )
        loaded: object = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"{shown}: cannot read it: {reason(exc)}") from exc
    except RecursionError:
        raise CommandError(
            f"{shown}: nested deeper than can be read; give a file `mcpobs contract snapshot` wrote"
        ) from None
    except json.JSONDecodeError as exc:
        raise CommandError(f"{shown}: not JSON ({exc}); give a file `mcpobs contract snapshot` wrote") from exc
    tools: object = cast(dict[str, object], loaded).get("tools") if isinstance(loaded, dict) else None
    if not isinstance(tools, list) or not all(_is_tool(tool) for tool in cast(list[object], tools)):
        raise CommandError(
            f'{printable(argument)}: not a snapshot (expected {{"tools": [...]}} as `mcpobs contract snapshot` writes)'
        )
    return cast(Mapping[str, Any], loaded)


def _is_tool(value: object) -> bool:
    return isinstance(value, dict) and isinstance(cast(dict[str, object], value).get("name"), str)
