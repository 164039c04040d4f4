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

import importlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from mcpobs._cli import CommandError
from mcpobs._core.contract import contract_fingerprint, schema_fingerprint, wire_tool
from mcpobs._core.wire_values import as_list, as_mapping

Verdict = Literal["breaking", "additive", "safe"]
Direction = Literal["input", "output"]
_ORDER = {"breaking": 0, "additive": 1, "safe": 2}


@dataclass(frozen=True)
class Change:
    verdict: Verdict
    tool: str
    what: str

    def __str__(self) -> str:
        return f"{self.verdict}: {self.tool}: {self.what}"


# -- snapshot --------------------------------------------------------------------------------


async def snapshot(target: str) -> dict[str, Any]:
    """The tools a server offers: `target` is `module:attribute` naming a server, or a URL."""
    from mcp import Client

    source: Any = target if "://" in target else _loaded(target)
    async with Client(source) as client:
        listing = await client.list_tools()
    tools = [wire_tool(t) for t in listing.tools]
    for tool in tools:
        tool["schemaFingerprint"] = schema_fingerprint(tool.get("inputSchema"), tool.get("outputSchema"))
        tool["contractFingerprint"] = contract_fingerprint(tool)
    return {"tools": tools}


def _load(target: str) -> Any:
    module_name, _, attribute = target.partition(":")
    if not attribute:
        raise ValueError(f"{target!r}: name a server as module:attribute (e.g. shop.server:mcp) or give a URL")
    value: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        value = getattr(value, part)
    return value() if callable(value) and not hasattr(value, "middleware") else value


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
    for name in old_tools.keys() & new_tools.keys():
        changes.extend(_tool_changes(name, old_tools[name], new_tools[name]))
    return sorted(changes, key=lambda c: (_ORDER[c.verdict], c.tool, c.what))


def _tool_changes(name: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[Change]:
    for key in ("inputSchema", "outputSchema"):
        for schema in (old.get(key), new.get(key)):
            problem = _schema_problem(schema)
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
            for v, what in _walk(direction, "", before, after, before, after)  # type: ignore[arg-type]
        )


def _schema_problem(schema: Any) -> str | None:
    if schema is None:
        return None
    from jsonschema import exceptions, validators

    try:
        validators.validator_for(schema, default=validators.Draft202012Validator).check_schema(schema)
    except exceptions.SchemaError as err:
        return err.message
    return None


def _resolve(schema: Any, root: Mapping[str, Any]) -> Any:
    """Follow local `$ref`s (pydantic puts nested models in `$defs`)."""
    seen = 0
    while (view := as_mapping(schema)) is not None and isinstance(view.get("$ref"), str) and seen < 32:
        ref = cast(str, view["$ref"])
        if not ref.startswith("#/"):
            return schema
        target: Any = root
        for part in ref[2:].split("/"):
            target = node.get(part) if (node := as_mapping(target)) is not None else None
        schema, seen = target, seen + 1
    return schema


def _types(schema: Any) -> frozenset[str]:
    view = as_mapping(schema)
    if view is None:
        return frozenset()
    found: set[str] = set()
    kind = view.get("type")
    if isinstance(kind, str):
        found.add(kind)
    elif (kinds := as_list(kind)) is not None:
        found.update(k for k in kinds if isinstance(k, str))
    for key in ("anyOf", "oneOf"):
        for option in cast("Iterable[object]", view.get(key) or ()):
            found |= _types(option)
    return frozenset(found)


def _walk(
    direction: Direction, path: str, old: Any, new: Any, old_root: Mapping[str, Any], new_root: Mapping[str, Any]
) -> Iterator[tuple[Verdict, str]]:
    old, new = as_mapping(_resolve(old, old_root)), as_mapping(_resolve(new, new_root))
    if old is None or new is None:
        return
    where = path or "(root)"
    old_types, new_types = _types(old), _types(new)
    if old_types and new_types and old_types != new_types:
        widened = old_types < new_types
        if direction == "input" and widened:
            yield "additive", f"{where}: accepts {sorted(new_types)} (was {sorted(old_types)})"
        else:
            yield "breaking", f"{where}: type {sorted(old_types)} -> {sorted(new_types)}"
    yield from _enum_changes(direction, where, old, new)
    yield from _property_changes(direction, path, old, new, old_root, new_root)
    old_items, new_items = as_mapping(old.get("items")), as_mapping(new.get("items"))
    if old_items is not None and new_items is not None:
        yield from _walk(direction, f"{path}[]", old_items, new_items, old_root, new_root)


def _enum_changes(
    direction: Direction, where: str, old: Mapping[str, Any], new: Mapping[str, Any]
) -> Iterator[tuple[Verdict, str]]:
    before, after = as_list(old.get("enum")), as_list(new.get("enum"))
    if before is None or after is None:
        return
    removed = [v for v in before if v not in after]
    added = [v for v in after if v not in before]
    if removed:
        yield ("breaking" if direction == "input" else "safe"), f"{where}: enum narrowed, removed {removed}"
    if added:
        yield ("additive" if direction == "input" else "breaking"), f"{where}: enum widened, added {added}"


def _property_changes(
    direction: Direction,
    path: str,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    old_root: Mapping[str, Any],
    new_root: Mapping[str, Any],
) -> Iterator[tuple[Verdict, str]]:
    old_props, new_props = as_mapping(old.get("properties") or {}), as_mapping(new.get("properties") or {})
    if old_props is None or new_props is None:
        return
    old_required = set(cast("Iterable[object]", old.get("required") or ()))
    new_required = set(cast("Iterable[object]", new.get("required") or ()))
    closed_before = old.get("additionalProperties") is False
    prefix = f"{path}." if path else ""
    for field in old_props.keys() - new_props.keys():
        if direction == "input":
            yield "breaking", f"{prefix}{field}: removed (old callers' values are dropped silently)"
        else:
            yield "breaking", f"{prefix}{field}: removed"
    for field in new_props.keys() - old_props.keys():
        if direction == "input" and field in new_required:
            yield "breaking", f"{prefix}{field}: new required input"
        elif closed_before and direction == "input":
            yield "breaking", f"{prefix}{field}: new input, but old replicas forbid additional properties"
        elif closed_before:
            yield "breaking", f"{prefix}{field}: new field, but old clients' schema forbids additional properties"
        else:
            yield "additive", f"{prefix}{field}: added"
    for field in old_props.keys() & new_props.keys():
        if direction == "input" and field in new_required and field not in old_required:
            yield "breaking", f"{prefix}{field}: now required"
        if direction == "output" and field in old_required and field not in new_required:
            yield "breaking", f"{prefix}{field}: no longer always present"
        yield from _walk(direction, f"{prefix}{field}", old_props[field], new_props[field], old_root, new_root)


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
        _loaded(target)  # a bad module or attribute is reported before any connection
    try:
        return anyio.run(snapshot, target)
    except CommandError:
        raise
    except Exception as exc:
        where = f"the server at {target}" if "://" in target else f"the server {target}"
        raise CommandError(f"could not list the tools of {where}: {_reason(exc)}") from exc


def _loaded(target: str) -> Any:
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise CommandError(
            f"{target!r} is neither a snapshot file nor a server: name a server as module:attribute "
            "(e.g. shop.server:mcp, looked up from the current directory) or give its URL (http://...)"
        )
    try:
        return _load(target)
    except ModuleNotFoundError as exc:
        raise CommandError(
            f"cannot import {exc.name or module_name!r} (for {target}): run from the folder that holds it, or put it on PYTHONPATH"
        ) from exc
    except AttributeError as exc:
        raise CommandError(f"{target}: module {module_name!r} has no {attribute!r}") from exc
    except Exception as exc:
        raise CommandError(f"{target}: importing or building the server failed: {_reason(exc)}") from exc


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
        raise CommandError(f"{argument}: cannot read it: {_reason(exc)}") from exc
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


def _reason(exc: BaseException) -> str:
    """The innermost cause of `exc` in a few words (task groups wrap connection errors in groups)."""
    inner = _first_leaf(exc)
    return f"{type(inner).__name__}: {inner}" if str(inner) else type(inner).__name__


def _first_leaf(exc: BaseException) -> BaseException:
    inner: tuple[BaseException, ...] = getattr(exc, "exceptions", ())
    return _first_leaf(inner[0]) if issubclass(type(exc), BaseExceptionGroup) and inner else exc
