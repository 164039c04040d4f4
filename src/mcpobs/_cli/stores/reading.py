"""One answer or file, read with care: whatever it holds, a value or one `CommandError` line.

Every store's answer and every file goes through `Reading`, so a wrong type anywhere says the
source, the place in it, what is there and what to do, and never becomes a traceback.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, NoReturn, cast

from mcpobs._cli import CommandError
from mcpobs._cli.render import printable

MAX_BYTES = 256 * 1024 * 1024
"""The most read of one answer, or of one line of a file (one ExportTraceServiceRequest)."""
MAX_DEPTH = 128
"""How deeply JSON written into an attribute (a shape, a schema) may nest; deeper is none mcpobs wrote."""
MAX_INT64 = 2**63 - 1
MIB = 1024 * 1024
_SPACE = re.compile(r"\s*")
_WHOLE = re.compile(r"-?\d{1,19}")
_DECODER = json.JSONDecoder()
Place = tuple[str | int, ...]


class Reading:
    """One answer or file being read. Anything in it that is not what was expected is one
    `CommandError` line: the source, the place in it, what is there, and what to do."""

    __slots__ = ("fix", "source")

    def __init__(self, source: str, fix: str) -> None:
        self.source = source
        self.fix = fix

    def fail(self, problem: str) -> NoReturn:
        raise CommandError(f"{self.source}: {problem}; {self.fix}")

    def expected(self, place: Place, value: Any, what: str) -> NoReturn:
        self.fail(f"{_place(place)} is {describe(value)}, expected {what}")

    def object(self, value: Any, place: Place) -> dict[str, Any]:
        if type(value) is not dict:
            self.expected(place, value, "an object")
        return cast(dict[str, Any], value)

    def array(self, value: Any, place: Place) -> list[Any]:
        """A list; none (absent or null) is an empty one."""
        if type(value) is list:
            return cast(list[Any], value)
        if value is None:
            return []
        self.expected(place, value, "a list")

    def objects(self, value: Any, place: Place) -> Iterator[tuple[int, dict[str, Any]]]:
        for index, item in enumerate(self.array(value, place)):
            if type(item) is not dict:
                self.expected((*place, index), item, "an object")
            yield index, cast(dict[str, Any], item)

    def text(self, value: Any, place: Place, default: str = "") -> str:
        if type(value) is str:
            return value
        if value is None:
            return default
        self.expected(place, value, "a string")

    def whole(self, value: Any, place: Place, low: int, high: int, *, quoted: bool = False) -> int:
        """A whole number in [low, high]; with `quoted`, also one written as a string (OTLP JSON's int64)."""
        if type(value) is int:
            number = value
        elif quoted and type(value) is str and _WHOLE.fullmatch(value):
            number = int(value)
        elif value is None:
            return low
        else:
            self.expected(place, value, "a whole number")
        if not low <= number <= high:
            self.expected(place, value, f"a whole number from {low} to {high}")
        return number

    def utf8(self, data: bytes) -> str:
        """`data` as text; a body or line that is not UTF-8 fails."""
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.fail(f"not UTF-8 ({exc.reason} at byte {exc.start})")

    def json(self, data: bytes) -> Any:
        """The one JSON document `data` holds."""
        try:
            return json.loads(data)
        except RecursionError:
            self.fail("JSON nested deeper than can be read")
        except ValueError as exc:
            self.fail(f"not JSON ({printable(exc, 120)})")

    def documents(self, text: str) -> Iterator[Any]:
        """JSON documents one after another (one per line, as the file exporter writes them, or concatenated)."""
        position, end = 0, len(text)
        while True:
            position = _SPACE.match(text, position).end()  # pyright: ignore[reportOptionalMemberAccess]
            if position >= end:
                return
            try:
                document, position = _DECODER.raw_decode(text, position)
            except RecursionError:
                self.fail("JSON nested deeper than can be read")
            except ValueError as exc:
                self.fail(f"not JSON ({printable(exc, 120)})")
            yield document


def describe(value: Any) -> str:
    """What a JSON value is, in a few words a terminal can show."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"the number {printable(value, 40)}"
    if isinstance(value, str):
        return f'the text "{printable(value, 40)}"'
    if isinstance(value, list):
        return f"a list of {len(cast(list[Any], value))}"
    return "an object"


def _place(place: Place) -> str:
    text = ""
    for part in place:
        text += f"[{part}]" if isinstance(part, int) else f".{printable(part, 60)}" if text else printable(part, 60)
    return text or "the answer"


# -- values read out of span attributes --------------------------------------------------------


def loads(text: str) -> Any:
    """JSON written into an attribute (a shape, a schema), or None when it is not JSON or nests
    deeper than `MAX_DEPTH`: what reads it walks it, so its depth is bounded here."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if within(value, MAX_DEPTH) else None


def within(value: Any, depth: int = MAX_DEPTH) -> bool:
    """`value` nests no deeper than `depth` (checked without recursion: what reads it next may recurse)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, level = stack.pop()
        if level > depth:
            return False
        if type(node) is dict:
            stack.extend((child, level + 1) for child in cast(dict[str, Any], node).values())
        elif type(node) is list:
            stack.extend((child, level + 1) for child in cast(list[Any], node))
    return True


def integer(value: Any) -> int | None:
    """An int, or a string of digits as one; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit() and len(value) <= 19:
        return int(value)
    return None
