"""Text OTLP can carry: valid UTF-8 and bounded, whatever a caller, peer or handler wrote.

OTLP sends strings as protobuf `string` fields, which must be valid UTF-8. A Python `str` can
hold what UTF-8 cannot encode: a lone surrogate ("\\ud800" is valid JSON, and a tool that puts
its argument in an exception message copies it), and one such string in one attribute makes
the exporter fail to encode its whole batch, hundreds of other requests' spans with it. Every
string mcpobs writes into telemetry from outside its own code (a status description, an
exception event, an attribute value, a log line) goes through `clean` first: cut to its
bound, and only when it is not ASCII, checked and repaired (a surrogate pair written as two
code points becomes its character, a lone surrogate U+FFFD). Whether such a string may be
recorded at all is `privacy`'s question, asked before this one.
"""

from __future__ import annotations


def clean(value: object, limit: int) -> str:
    """`value` as a string of at most `limit` characters that encodes as UTF-8."""
    text = value if type(value) is str else _text(value)
    if len(text) > limit:
        text = text[:limit]
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _repair(text)[:limit]
    return text


def clean_tail(text: str, limit: int) -> str:
    """Like `clean`, keeping the end (a traceback's last lines say where it failed)."""
    return clean(text[-limit:] if len(text) > limit else text, limit)


def _text(value: object) -> str:
    try:
        return str(value)
    except Exception:  # a __str__ that raises is the value's problem, never the call's
        return f"<{type(value).__name__}>"


def _repair(text: str) -> str:
    # UTF-16 with surrogatepass joins a pair written as two code points into its character;
    # decoding with replace turns each lone surrogate into U+FFFD.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


LOG_FIELD_LENGTH = 128
"""Characters of one peer-written value in a log line (a name, a version), escapes included."""

_ESCAPED = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Unicode categories escaped in a log line: controls (newline, ESC, C1), format characters
(bidi overrides, zero-width), lone surrogates and line or paragraph separators."""
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def for_log(value: object, limit: int = LOG_FIELD_LENGTH) -> str:
    """`value` as one field of a log line: on one line, nothing a terminal acts on, at most `limit` characters.

    A peer's name or version goes into mcpobs's log lines; as written it could start a forged
    line (a newline), drive the terminal (ESC), reorder what is shown (bidi overrides) or fill
    the log (200,000 characters). Each such character is written as its escape (`\\n`,
    `\\x1b`, `\\u202e`, a backslash as `\\\\`), and the field is cut to `limit` characters,
    ending in `…` when cut.
    """
    text = value if type(value) is str else _text(value)
    if len(text) <= limit and text.isascii() and text.isprintable() and "\\" not in text:
        return text  # the common case: a short plain name
    out: list[str] = []
    size = 0
    for char in text[: limit + 1]:
        piece = _piece(char)
        if size + len(piece) > limit:  # cut: room for the mark that says so
            while out and size + 1 > limit:
                size -= len(out.pop())
            out.append("…")
            break
        out.append(piece)
        size += len(piece)
    return "".join(out)


def escaped(text: str) -> str:
    """`text` with each character a terminal would act on written as its escape, as `for_log`
    writes it, and not cut: for a command's output, which bounds its fields itself."""
    if text.isascii() and text.isprintable() and "\\" not in text:
        return text
    return "".join(_piece(char) for char in text)


def _piece(char: str) -> str:
    import unicodedata

    if char in _NAMED:
        return _NAMED[char]
    if unicodedata.category(char) in _ESCAPED:
        point = ord(char)
        return f"\\x{point:02x}" if point < 0x100 else f"\\u{point:04x}" if point < 0x10000 else f"\\U{point:08x}"
    return char
