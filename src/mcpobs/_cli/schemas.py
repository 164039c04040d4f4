"""How a tool's JSON Schema treats what clients hold and send: the walk behind `contract diff` and `replay`.

Two questions, one walk over schemas (local `$ref`s followed as the shape recorder follows
them, places named the same way: ``(root)``, ``warehouse.region``, ``items[]``):

- `walk`: a schema against another, change by change, for one direction of a rolling release
  (`contract diff`, and the replay's output check: the output schema a client holds against the
  candidate's);
- `check_arguments`: a recorded argument shape (value-free: keys, types, enum members; see
  `mcpobs._core.shapes`) against a candidate's input schema (`contract replay`). What a shape
  cannot decide (a new pattern, format or range: the values were never recorded) is undecided.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, Literal, cast

from mcpobs._core.shapes import _alternatives, _resolve  # pyright: ignore[reportPrivateUsage]
from mcpobs._core.wire_values import as_list, as_mapping

Verdict = Literal["breaking", "additive", "safe"]
Direction = Literal["input", "output"]
Kind = Literal["fail", "undecided"]
_UNDECIDABLE = (
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "patternProperties",
    "propertyNames",
    "not",
)
"""Keywords whose verdict depends on a value a shape does not hold."""
MAX_DEPTH = 32
"""Levels of properties and items `walk` compares."""


def problem(schema: Any) -> str | None:
    """Why `schema` is not a valid schema of the dialect it declares (2020-12 when none), or None."""
    if schema is None:
        return None
    from jsonschema import exceptions, validators

    try:
        validators.validator_for(schema, default=validators.Draft202012Validator).check_schema(schema)
    except exceptions.SchemaError as err:
        return err.message
    return None


def types(schema: Any) -> frozenset[str]:
    """The JSON types a schema node names (through `anyOf`/`oneOf`); empty when it names none."""
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
        for option in as_list(view.get(key)) or ():
            found |= types(option)
    return frozenset(found)


def _ref(schema: Any) -> Any:
    view = as_mapping(schema)
    return view.get("$ref") if view is not None and isinstance(view.get("$ref"), str) else None


def _required(node: Mapping[str, Any]) -> set[str]:
    """The names a node's `required` lists (none when it is not a list of names)."""
    return {name for name in as_list(node.get("required")) or () if isinstance(name, str)}


def _where(path: str) -> str:
    return path or "(root)"


def _field(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


# -- a schema against another ------------------------------------------------------------------


def walk(
    direction: Direction,
    path: str,
    old: Any,
    new: Any,
    old_root: Any,
    new_root: Any,
    depth: int = 0,
    followed: frozenset[tuple[Any, Any]] = frozenset(),
    closed_by: str | None = None,
) -> Iterator[tuple[Verdict, str]]:
    """Each change from schema `old` to `new` at `path` and below: (verdict, "place: what"). A pair of
    `$ref`s already `followed` on the way down is not followed again (a model that holds itself: its
    changes were seen above), and no walk goes deeper than `MAX_DEPTH` levels.

    `closed_by`: the framework that wrote `additionalProperties: false` into every input schema of the
    old release (FastMCP 3 and 4 do), so that no tool chose it: a new optional input is then additive as
    the clients see it, its line saying that old replicas refuse it until the rollout ends."""
    refs = (_ref(old), _ref(new))
    if refs != (None, None):
        if refs in followed:
            return
        followed = followed | {refs}
    old, new = _resolve(old, old_root), _resolve(new, new_root)
    if old is None or new is None or depth > MAX_DEPTH:
        return
    where = _where(path)
    old_types, new_types = types(old), types(new)
    if old_types and new_types and old_types != new_types:
        widened = old_types < new_types
        if direction == "input" and widened:
            yield "additive", f"{where}: accepts {sorted(new_types)} (was {sorted(old_types)})"
        else:
            yield "breaking", f"{where}: type {sorted(old_types)} -> {sorted(new_types)}"
    yield from _enum_changes(direction, where, old, new)
    yield from _property_changes(direction, path, old, new, old_root, new_root, depth, followed, closed_by)
    old_items, new_items = as_mapping(old.get("items")), as_mapping(new.get("items"))
    if old_items is not None and new_items is not None:
        yield from walk(
            direction, f"{path}[]", old_items, new_items, old_root, new_root, depth + 1, followed, closed_by
        )


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
    old_root: Any,
    new_root: Any,
    depth: int,
    followed: frozenset[tuple[Any, Any]],
    closed_by: str | None,
) -> Iterator[tuple[Verdict, str]]:
    old_props, new_props = as_mapping(old.get("properties") or {}), as_mapping(new.get("properties") or {})
    if old_props is None or new_props is None:
        return
    old_required, new_required = _required(old), _required(new)
    closed_before = old.get("additionalProperties") is False
    for name in old_props.keys() - new_props.keys():
        if direction == "input":
            yield "breaking", f"{_field(path, name)}: removed (old callers' values are dropped silently)"
        else:
            yield "breaking", f"{_field(path, name)}: removed"
    for name in new_props.keys() - old_props.keys():
        if direction == "input" and name in new_required:
            yield "breaking", f"{_field(path, name)}: new required input"
        elif closed_before and direction == "input" and closed_by:
            yield (
                "additive",
                (
                    f"{_field(path, name)}: added (optional; {closed_by} closes every input schema, so old replicas "
                    "refuse it until the rollout ends: `contract replay` of the old release says whether clients send it)"
                ),
            )
        elif closed_before and direction == "input":
            yield "breaking", f"{_field(path, name)}: new input, but old replicas forbid additional properties"
        elif closed_before:
            yield "breaking", f"{_field(path, name)}: new field, but old clients' schema forbids additional properties"
        else:
            yield "additive", f"{_field(path, name)}: added"
    for name in old_props.keys() & new_props.keys():
        if direction == "input" and name in new_required and name not in old_required:
            yield "breaking", f"{_field(path, name)}: now required"
        if direction == "output" and name in old_required and name not in new_required:
            yield "breaking", f"{_field(path, name)}: no longer always present"
        below = (old_props[name], new_props[name])
        yield from walk(direction, _field(path, name), *below, old_root, new_root, depth + 1, followed, closed_by)


# -- a recorded shape against a schema ---------------------------------------------------------


def check_arguments(shape: Any, candidate: Any, recorded: Any) -> Iterator[tuple[Kind, str, str]]:
    """(kind, field, reason) for each way the candidate input schema would treat this argument shape
    differently; `recorded` is the input schema the shape was recorded under (None when unknown)."""
    yield from _check(
        shape, _alternatives(candidate, candidate), candidate, _alternatives(recorded, recorded), recorded, ""
    )


def _check(
    shape: Any, nodes: list[Mapping[str, Any]], root: Any, was: list[Mapping[str, Any]], was_root: Any, path: str
) -> Iterator[tuple[Kind, str, str]]:
    if not nodes:
        return
    where = _where(path)
    kind = _json_type(shape)
    if kind is None:
        yield "undecided", where, "nested deeper than shapes are recorded"
        return
    accepted = frozenset[str]().union(*(types(n) for n in nodes))
    if not _accepts(accepted, kind):
        yield "fail", where, f"callers send {kind}, the candidate accepts {' or '.join(sorted(accepted))}"
        return
    for keyword in _UNDECIDABLE:
        now = [n[keyword] for n in nodes if keyword in n]
        before = [n[keyword] for n in was if keyword in n]
        if now and now != before:
            yield "undecided", where, f"{keyword} {_short(now[0])} is new (values are not recorded)"
    members: list[Any] = []
    enumerated = False
    for node in nodes:
        if isinstance(node.get("enum"), list):
            enumerated = True
            members.extend(cast(list[Any], node["enum"]))
        if "const" in node:
            enumerated = True
            members.append(node["const"])
    if enumerated and kind not in ("object", "array"):
        if isinstance(shape, Mapping) and "=" in shape:
            value = cast(Mapping[str, Any], shape)["="]
            if not any(value == m and type(value) is type(m) for m in members):
                yield "fail", where, f"enum member {json.dumps(value)} is gone; callers send it"
        else:
            yield "undecided", where, "the candidate enumerates values; callers' values here are not recorded"
    if kind == "object":
        yield from _check_object(
            cast(Mapping[str, Any], cast(Mapping[str, Any], shape)["{}"]), nodes, root, was, was_root, path
        )
    elif kind == "array":
        below, before = _items(nodes, root), _items(was, was_root)
        for element in cast(list[Any], cast(Mapping[str, Any], shape)["[]"]):
            yield from _check(element, below, root, before, was_root, f"{path}[]")


def _check_object(
    fields: Mapping[str, Any],
    nodes: list[Mapping[str, Any]],
    root: Any,
    was: list[Mapping[str, Any]],
    was_root: Any,
    path: str,
) -> Iterator[tuple[Kind, str, str]]:
    objects = [n for n in nodes if "properties" in n or "required" in n or "additionalProperties" in n]
    required: set[str] = set()
    for node in objects:
        required |= _required(node)
    for name in sorted(required - set(fields)):
        if "*" in fields:
            yield "undecided", _field(path, name), "now required; callers send fields whose names are not recorded"
        else:
            yield "fail", _field(path, name), "required by the candidate; callers omit it"
    closed = any(n.get("additionalProperties") is False for n in objects)
    for name, sub in fields.items():
        if name == "...":
            continue
        if name == "*":
            if closed:
                yield (
                    "fail",
                    _field(path, "*"),
                    "callers send fields the recorded schema did not list; the candidate forbids additional properties",
                )
            continue
        listed, below = _child(objects, name, root)
        _, before = _child(was, name, was_root)
        if listed:
            yield from _check(sub, below, root, before, was_root, _field(path, name))
        elif closed:
            yield "fail", _field(path, name), "callers send it; the candidate forbids additional properties"
        elif before:
            yield (
                "fail",
                _field(path, name),
                "removed from the candidate; callers send it (their values would be ignored)",
            )


def _json_type(shape: Any) -> str | None:
    if isinstance(shape, str):
        return None if shape == "..." else shape
    if isinstance(shape, Mapping):
        shape = cast(Mapping[str, Any], shape)
        if "=" in shape:
            value = shape["="]
            return (
                "boolean"
                if isinstance(value, bool)
                else "integer"
                if isinstance(value, int)
                else "number"
                if isinstance(value, float)
                else "null"
                if value is None
                else "string"
            )
        if "{}" in shape:
            return "object"
        if "[]" in shape:
            return "array"
    return None


def _accepts(accepted: frozenset[str], kind: str) -> bool:
    return not accepted or kind in accepted or (kind == "integer" and "number" in accepted)


def _child(nodes: list[Mapping[str, Any]], key: str, root: Any) -> tuple[bool, list[Mapping[str, Any]]]:
    listed = False
    found: list[Mapping[str, Any]] = []
    for node in nodes:
        properties = node.get("properties")
        if isinstance(properties, Mapping) and key in properties:
            listed = True
            found.extend(_alternatives(cast(Mapping[str, Any], properties)[key], root))
    return listed, found


def _items(nodes: list[Mapping[str, Any]], root: Any) -> list[Mapping[str, Any]]:
    found: list[Mapping[str, Any]] = []
    for node in nodes:
        if isinstance(node.get("items"), Mapping):
            found.extend(_alternatives(node["items"], root))
    return found


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."
