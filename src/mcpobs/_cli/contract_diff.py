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

from mcpobs._cli import CommandError, candidate, schemas
from mcpobs._cli.candidate import CLOSED_BY, check_target, reason, snapshot
from mcpobs._cli.schemas import Verdict

_ORDER = {"breaking": 0, "additive": 1, "safe": 2}


@dataclass(frozen=True)
class Change:
    verdict: Verdict
    tool: str
    what: str

    def __str__(self) -> str:
        return f"{self.verdict}: {self.tool}: {self.what}"


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


def main_diff(old: str, new: str) -> tuple[str, int]:
    """`old` and `new` are snapshot files, or (for a snapshot taken now) a module:attribute or a URL."""
    changes = diff(_read(old), _read(new))
    lines = [str(c) for c in changes] or ["no changes"]
    return "\n".join(lines), 1 if any(c.verdict == "breaking" for c in changes) else 0


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
        raise CommandError(f"{argument}: no such file (give a file `mcpobs contract snapshot` wrote, or a server)")
    try:
        loaded: object = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"{argument}: cannot read it: {reason(exc)}") from exc
    except json.JSONDecodeError as exc:
        raise CommandError(f"{argument}: not JSON ({exc}); give a file `mcpobs contract snapshot` wrote") from exc
    tools: object = cast(dict[str, object], loaded).get("tools") if isinstance(loaded, dict) else None
    if not isinstance(tools, list) or not all(_is_tool(tool) for tool in cast(list[object], tools)):
        raise CommandError(
            f'{argument}: not a snapshot (expected {{"tools": [...]}} as `mcpobs contract snapshot` writes)'
        )
    return cast(Mapping[str, Any], loaded)


def _is_tool(value: object) -> bool:
    return isinstance(value, dict) and isinstance(cast(dict[str, object], value).get("name"), str)
