"""OTLP JSON files (`--from`): what a collector's `file` exporter writes, read a line at a time."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from mcpobs._cli import CommandError
from mcpobs._cli.render import Span, printable
from mcpobs._cli.stores.otlp_json import otlp_spans
from mcpobs._cli.stores.reading import MAX_BYTES, MIB, Reading

_FILE_FIX = "give what a collector's `file` exporter writes (one ExportTraceServiceRequest JSON per line)"
_DECODER = json.JSONDecoder()


def file_spans(path: str, having: frozenset[str] = frozenset()) -> Iterator[Span]:
    """The spans of an OTLP JSON file (`--from`), read a line at a time: a file of any length, each line
    at most `MAX_BYTES` (a document written over several lines is read whole, up to that size)."""
    source = f"--from {path}"
    try:
        with Path(path).open("rb") as handle:
            yield from _lines(handle, source, having)
    except FileNotFoundError:
        raise CommandError(f"{source}: no such file (give the file a collector's `file` exporter writes)") from None
    except OSError as exc:  # opening it: reading is `_read`'s
        raise CommandError(f"{source}: cannot read it: {printable(exc)}") from None


def _lines(handle: BinaryIO, source: str, having: frozenset[str]) -> Iterator[Span]:
    number = 0
    while line := _read(handle.readline, source):
        number += 1
        reading = Reading(f"{source}, line {number}", _FILE_FIX)
        if len(line) > MAX_BYTES:
            reading.fail(f"longer than {MAX_BYTES // MIB} MiB")
        text = reading.utf8(line)
        if number == 1:
            try:
                documents = list(reading.documents(text))
            except CommandError:
                if not _incomplete(text):
                    raise
                yield from _whole_file(handle, source, having)  # one document written over several lines
                return
        else:
            documents = reading.documents(text)
        for document in documents:
            yield from otlp_spans(document, reading, having)


def _whole_file(handle: BinaryIO, source: str, having: frozenset[str]) -> Iterator[Span]:
    handle.seek(0)
    whole = _read(handle.read, source)
    reading = Reading(source, _FILE_FIX)
    if len(whole) > MAX_BYTES:
        reading.fail(f"a document written over several lines, longer than {MAX_BYTES // MIB} MiB in all")
    for document in reading.documents(reading.utf8(whole)):
        yield from otlp_spans(document, reading, having)


def _read(read: Callable[[int], bytes], source: str) -> bytes:
    try:
        return read(MAX_BYTES + 1)
    except OSError as exc:
        raise CommandError(f"{source}: cannot read it: {printable(exc)}") from None


def _incomplete(line: str) -> bool:
    """Whether the line starts a JSON document it does not end (pretty-printed JSON)."""
    stripped = line.strip()
    try:
        _DECODER.raw_decode(stripped)
    except json.JSONDecodeError as exc:
        return exc.pos >= len(stripped)
    except (ValueError, RecursionError):
        return False
    return False
