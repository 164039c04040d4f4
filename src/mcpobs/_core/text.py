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
