"""The tool-call corpus: what shape each call's arguments and structured result had, never their values.

A shape is a canonical, value-free description of a JSON value: the JSON type of each
scalar, the keys an object holds with their shapes, the merged shapes of an array's
elements. A literal value enters only where the tool's own schema enumerates it (an `enum`
member or a `const`), because then it is the schema's text, not the caller's. An object key
the schema does not list is the caller's text too: all such keys fold into one `*` entry
(their merged shapes), unless the user opted in to capturing content, when the key names go
in as `redact` leaves them. Strings, numbers, ids, free keys: none of them is ever recorded.

The canonical form is JSON:

- ``"string"``, ``"integer"``, ``"number"``, ``"boolean"``, ``"null"``;
- ``{"=": value}``: a literal the schema enumerates;
- ``{"{}": {"key": shape, ..., "*": [shapes]}}``: an object (``*``: the keys the schema does not list);
- ``{"[]": [shapes]}``: an array, its elements' distinct shapes (the first `MAX_ELEMENTS` looked at);
- ``"..."``: deeper than `MAX_DEPTH`, or past `MAX_KEYS` keys.

Shapes are computed as nested tuples (hashable, cheap) and looked up in a table: only a
shape seen for the first time is rendered as JSON and hashed (16 hex characters of SHA-256).
The `ShapeBook` keeps each distinct (tool, schema fingerprint, client, direction, shape)
with its count, bounded per tool and in total (the oldest is evicted, and the evictions are
counted), and says when a span should carry the whole shape: the first time the process sees
it on a recorded span, and again when its count reaches a power of two or `REPORT_INTERVAL`
seconds have passed, so the counts reach the trace store without a span per call.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from itertools import islice
from typing import Any, Final, cast

from mcpobs import semconv

MAX_DEPTH: Final = 16
MAX_KEYS: Final = 256
"""Keys looked at per object; later ones fold into `...`."""
MAX_ELEMENTS: Final = 32
"""Elements looked at per array (the same array always gives the same shape)."""
MAX_SHAPES_PER_TOOL: Final = semconv.MAX_SHAPES_PER_TOOL
MAX_SHAPES: Final = semconv.MAX_SHAPES
REPORT_INTERVAL: Final = semconv.SHAPE_REPORT_INTERVAL

DEEP: Final = "..."
_SCALARS: Final[dict[type[Any], str]] = {
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    type(None): "null",
}
_Node = Mapping[str, Any]


def _resolve(schema: Any, root: Any) -> _Node | None:
    """A schema node with local `$ref`s followed (pydantic puts nested models in `$defs`)."""
    for _ in range(32):
        if not isinstance(schema, Mapping):
            return None
        node = cast(_Node, schema)
        ref = node.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return node
        target: Any = root
        for part in ref[2:].split("/"):
            target = cast(_Node, target).get(part) if isinstance(target, Mapping) else None
        schema = target
    return None


def _alternatives(schema: Any, root: Any, depth: int = 0) -> list[_Node]:
    """The node and the branches of its `anyOf`/`oneOf`/`allOf`, resolved (Optional[...] is an anyOf)."""
    node = _resolve(schema, root)
    if node is None:
        return []
    found = [node]
    if depth < 4:
        for key in ("anyOf", "oneOf", "allOf"):
            branches = node.get(key)
            if isinstance(branches, list):
                for branch in cast(list[Any], branches):
                    found.extend(_alternatives(branch, root, depth + 1))
    return found


def _members(nodes: list[_Node]) -> frozenset[tuple[type[Any], Any]] | None:
    """The literals the schema names here (`enum` members, `const`), as (type, value)."""
    found: set[tuple[type[Any], Any]] = set()
    named = False
    for node in nodes:
        values: list[Any] = []
        members = node.get("enum")
        if isinstance(members, list):
            values.extend(cast(list[Any], members))
        if "const" in node:
            values.append(node["const"])
        for value in values:
            named = True
            kind = cast("type[Any]", type(value))
            if kind in _SCALARS:
                found.add((kind, value))
    return frozenset(found) if named else None


def _children(nodes: list[_Node], key: str, root: Any) -> tuple[bool, list[_Node]]:
    """(whether a node lists `key`, the schemas of its value)."""
    listed = False
    found: list[_Node] = []
    for node in nodes:
        properties = node.get("properties")
        if isinstance(properties, Mapping) and key in properties:
            listed = True
            found.extend(_alternatives(cast(_Node, properties)[key], root))
        else:
            extra = node.get("additionalProperties")
            if isinstance(extra, Mapping):
                found.extend(_alternatives(extra, root))
    return listed, found


class _Plan:
    """What a schema says at one place, compiled once per tool schema: the literals it names, and
    (built when first needed) the plans of its properties and items."""

    __slots__ = ("_items", "_props", "members", "nodes", "root")

    def __init__(self, nodes: list[_Node], root: Any) -> None:
        self.nodes = nodes
        self.root = root
        self.members = _members(nodes)
        self._props: dict[str, tuple[bool, _Plan]] = {}
        self._items: _Plan | None = None

    def child(self, key: str) -> tuple[bool, _Plan]:
        hit = self._props.get(key)
        if hit is None:
            if not self.nodes:
                return False, self
            listed, below = _children(self.nodes, key, self.root)
            hit = (listed, _Plan(below, self.root) if below else _NOTHING)
            if listed or len(self._props) < 64:  # a caller's free keys never grow it without bound
                self._props[key] = hit
        return hit

    def items(self) -> _Plan:
        if self._items is None:
            found: list[_Node] = []
            for node in self.nodes:
                items = node.get("items")
                if isinstance(items, Mapping):
                    found.extend(_alternatives(items, self.root))
            self._items = _Plan(found, self.root) if found else _NOTHING
        return self._items


_NOTHING: Final = _Plan([], None)


def plan(schema: Any) -> _Plan:
    """The compiled form of a tool's input or output schema (keep it with the schema: it is built lazily)."""
    nodes = _alternatives(schema, schema)
    return _Plan(nodes, schema) if nodes else _NOTHING


def shape(value: Any, compiled: _Plan, *, free_keys: bool = False) -> Any:
    """The shape of `value` as nested tuples, against a schema's `plan`.

    `free_keys`: keep the names of keys the schema does not list (only with content capture on).
    """
    return _shape(value, compiled, 0, free_keys)


def _shape(value: object, here: _Plan, depth: int, free_keys: bool) -> Any:
    # The hot path of every tools/call: no `cast`, no ABC check for the JSON types, one lookup per key.
    kind: type[object] = type(value)
    scalar = _SCALARS.get(kind)
    if scalar is not None:
        members = here.members
        if members is not None and (kind, value) in members:
            return ("=", value)
        return scalar
    if depth >= MAX_DEPTH:
        return DEEP
    depth += 1
    if kind is dict or isinstance(value, Mapping):
        mapping = cast("dict[str, object]", value)  # keys checked below: JSON has only strings
        items: Iterable[tuple[str, object]] = mapping.items()
        cut = len(mapping) > MAX_KEYS
        if cut:
            items = islice(items, MAX_KEYS)
        fields: list[tuple[str, Any]] = []
        free: set[Any] | None = None
        known = here._props  # pyright: ignore[reportPrivateUsage]
        for key, item in items:
            hit = known.get(key)
            if hit is None:
                hit = here.child(key) if type(key) is str else (False, _NOTHING)
            listed, below = hit
            item_kind: type[object] = type(item)
            found = _SCALARS.get(item_kind)  # a scalar field is answered here, without a call
            if found is None:
                found = _shape(item, below, depth, free_keys)
            elif below.members is not None and (item_kind, item) in below.members:
                found = ("=", item)
            if listed or (free_keys and type(key) is str):
                fields.append((key, found))
            else:
                if free is None:
                    free = set()
                free.add(found)
        if len(fields) > 1:
            fields.sort()
        if cut:
            fields.append(("...", DEEP))
        if free is not None:
            fields.append(("*", frozenset(free)))
        return ("{}", tuple(fields))
    if kind is list or isinstance(value, list | tuple):
        below = here.items()
        sequence = cast("list[object]", value)
        return ("[]", frozenset([_shape(item, below, depth, free_keys) for item in sequence[:MAX_ELEMENTS]]))
    return "string"  # not a JSON value (a pydantic object, say): what the wire would carry


def canonical(found: Any) -> Any:
    """The canonical JSON form of a shape from `shape`."""
    if isinstance(found, str):
        return found
    tag, body = found
    if tag == "=":
        return {"=": body}
    if tag == "[]":
        return {"[]": _union(body)}
    fields: dict[str, Any] = {}
    for key, sub in body:
        fields[key] = _union(cast("frozenset[Any]", sub)) if key == "*" else canonical(sub)
    return {"{}": fields}


def _union(shapes: frozenset[Any]) -> list[Any]:
    rendered = [canonical(s) for s in shapes]
    return sorted(rendered, key=dump)


def dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def shape_id(definition: Any) -> str:
    """16 hex characters of SHA-256 of the canonical JSON (what a span carries on every call)."""
    return hashlib.sha256(dump(definition).encode("utf-8", "surrogatepass")).hexdigest()[:16]


class _Entry:
    __slots__ = ("count", "definition", "id", "next_count", "next_time", "reported")

    def __init__(self, definition: str, ident: str) -> None:
        self.definition = definition
        self.id = ident
        self.count = 0
        self.reported = False
        self.next_count = 1
        self.next_time = 0.0


class ShapeBook:
    """Every distinct shape one server saw, per tool, schema, client and direction, with its count."""

    __slots__ = ("_entries", "_per_tool", "evicted", "recorder")

    def __init__(self) -> None:
        self._entries: dict[tuple[Any, ...], _Entry] = {}
        self._per_tool: dict[str, list[tuple[Any, ...]]] = {}
        self.evicted = 0
        """Entries dropped to stay within the bounds (counted again from one if seen again)."""
        self.recorder = os.urandom(4).hex()
        """Tells one process's running counts from another's in the trace store."""

    def __len__(self) -> int:
        return len(self._entries)

    def note(self, key: tuple[Any, ...], found: Any, now: float, recording: bool) -> tuple[_Entry, bool]:
        """Count one call of shape `found` under `key` (tool first); (the entry, whether the span should
        carry the whole shape and its count now)."""
        full = (*key, found)
        entry = self._entries.get(full)
        if entry is None:
            definition = canonical(found)
            entry = _Entry(dump(definition), shape_id(definition))
            self._admit(key[0], full, entry)
        entry.count += 1
        if not recording:
            return entry, False
        if not entry.reported or entry.count >= entry.next_count or now >= entry.next_time:
            entry.reported = True
            while entry.next_count <= entry.count:
                entry.next_count *= 2
            entry.next_time = now + REPORT_INTERVAL
            return entry, True
        return entry, False

    def _admit(self, tool: str, full: tuple[Any, ...], entry: _Entry) -> None:
        keys = self._per_tool.get(tool)
        if keys is None:
            keys = self._per_tool[tool] = []
        if len(keys) >= MAX_SHAPES_PER_TOOL:
            self._drop(keys.pop(0))
        elif len(self._entries) >= MAX_SHAPES:
            oldest = next(iter(self._entries))
            self._per_tool[oldest[0]].remove(oldest)
            self._drop(oldest)
        keys.append(full)
        self._entries[full] = entry

    def _drop(self, full: tuple[Any, ...]) -> None:
        del self._entries[full]
        self.evicted += 1
