"""The one privacy step every text from outside mcpobs passes before it is recorded.

A caller, a tool or a peer writes text mcpobs could record: an exception's message and the
traceback that repeats it, a JSON-RPC error's message, a status description built from
either, a resource URI, a progress message, a cancellation reason, and the names, versions and
ids a peer chooses (a tool name as sent, a string request id, the revision a client asked for,
a client's name, the model a client declares). Any of them can carry a card number, a token or
an email address. Each goes through `Privacy` here, nowhere else:

- error texts (exception messages, the message line of a traceback, JSON-RPC error messages,
  status descriptions) are left out unless `record_error_messages=True`; the exception's type,
  the code, the boundary and the traceback's frames (code locations) are always kept;
- resource URIs lose their userinfo and every query value (and fragment) unless
  `raw_resource_uris=True` (OpenTelemetry's rule for `url.full`, applied to every query key;
  `uri.py` says where a URI's parts are);
- a peer's cancellation reason is an error text like the others (opt-in);
- progress messages are text a tool wrote: left out unless `record_progress_messages=True`;
- identifiers a peer chose (`identifier`, `name`) are recorded, bounded; a name or version that
  is not a string is not recorded at all (nothing a peer sends becomes text around `redact`);
- whatever is recorded passes the user's `redact` first (a `str` in, what may be recorded out;
  None records nothing), then `text.clean` (bounded, valid UTF-8).

Captured tool arguments and results (`content`, `redacted`) go through the same `redact`. This
module is the one place that calls `redact`: one that raises, or answers a text with something
other than a string, is contained here (that text is not recorded, and one warning names the
exception's type, never its message, which may be the very value).
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable
from typing import Any

from opentelemetry.semconv.attributes.exception_attributes import (
    EXCEPTION_MESSAGE,
    EXCEPTION_STACKTRACE,
    EXCEPTION_TYPE,
)

from mcpobs import semconv
from mcpobs._core.config import Settings
from mcpobs._core.copies import detached
from mcpobs._core.frames import frames_only
from mcpobs._core.guard import logger
from mcpobs._core.sdk import ProtocolError
from mcpobs._core.text import clean, clean_tail
from mcpobs._core.uri import REDACTED, scrub

__all__ = ["DEFAULT", "REDACTED", "Privacy", "frames_only", "scrub_uri"]

scrub_uri = scrub
"""`uri.scrub`: a URI without userinfo, query values and fragment."""

_warned: set[tuple[str, str]] = set()
_SAID = {
    "raised": (
        "mcpobs: redact raised %s on a value it was given, so that value is not recorded. redact is called "
        "with strings (error messages, resource URIs, progress messages, names and ids) as well as with "
        "captured arguments and results: return strings unchanged if it only knows dicts."
    ),
    "returned": (
        "mcpobs: redact returned a %s for a text (an error message, a resource URI, a progress message, a "
        "name or an id), so that text is not recorded. Return a str (the text, masked or not), or None to "
        "record nothing."
    ),
    "copy": (
        "mcpobs: captured content could not be copied for redact (%s), so it is not recorded. redact is handed "
        "a copy, so that editing it in place cannot change the call."
    ),
    "json": (
        "mcpobs: captured content could not be written as JSON (%s), so it is not recorded. redact can "
        "return a JSON-ready copy (dicts, lists, strings, numbers)."
    ),
}


def _contained(how: str, kind: type) -> None:
    """Say once per (how, type) that a value was not recorded; only the type: the value may be in its message."""
    name = kind.__qualname__
    if (how, name) not in _warned:
        _warned.add((how, name))
        logger.warning(_SAID[how], name)


class Privacy:
    """Built once per `instrument()` from its settings; read-only afterwards."""

    __slots__ = ("_content_limit", "_limit", "_redact", "messages", "progress_messages", "raw_uris")

    def __init__(self, settings: Settings) -> None:
        self._redact: Callable[[Any], Any] | None = settings.redact
        self._limit = settings.max_attribute_length
        self._content_limit = settings.max_content_length
        self.messages = settings.record_error_messages
        self.raw_uris = settings.raw_resource_uris
        self.progress_messages = settings.record_progress_messages

    # -- the one call of `redact` -------------------------------------------------------------

    def redacted(self, value: object) -> Any:
        """`value` (captured content, or a text) as the user's `redact` returns it; None for nothing.

        The whole value, before any cut (a cut could split what `redact` looks for); captured
        content as a copy (`_core/copies.py`), which `redact` may edit in place. A `redact`
        that raises records nothing and is named once in mcpobs's log by its exception's type.
        """
        redact = self._redact
        if redact is None:
            return value
        if type(value) is not str:  # captured content: a copy, so an in-place edit cannot reach the call
            try:
                value = detached(value)
            except Exception as exc:
                _contained("copy", type(exc))
                return None
        try:
            return redact(value)
        except Exception as exc:
            _contained("raised", type(exc))
            return None

    def _redacted_text(self, text: str) -> str | None:
        """A text through `redact`: a string back, or nothing (None, a raise, anything else)."""
        found: object = self.redacted(text)
        if found is None or type(found) is str:
            return found
        if isinstance(found, str):  # a subclass: its own text, as a plain string
            return str.__str__(found)
        _contained("returned", type(found))
        return None

    # -- texts ----------------------------------------------------------------------------------

    def text(self, value: object, limit: int | None = None) -> str | None:
        """Text from outside that may be recorded: through `redact`, then `clean`; None for nothing."""
        text = value if type(value) is str else clean(value, _WHOLE)
        if self._redact is not None:
            found = self._redacted_text(text)
            if found is None:
                return None
            text = found
        return clean(text, self._limit if limit is None else limit)

    def identifier(self, value: object, limit: int | None = None) -> str | None:
        """A name, version or id a peer chose (a string JSON-RPC id, a client's name): recorded,
        bounded, through `redact`. An integer (most request ids) is digits: no text to redact."""
        bound = self._limit if limit is None else limit
        kind = type(value)
        if kind is str:
            text: str = value  # type: ignore[assignment]
            if self._redact is None and len(text) <= bound and text.isascii():
                return text  # the common case: nothing to redact, cut or repair
            return self.text(text, bound)
        if kind is int:
            try:
                digits = str(value)
            except ValueError:  # more digits than `str` converts
                return None
            return digits[:bound]
        return self.text(value, bound)

    def name(self, value: object, limit: int | None = None) -> str | None:
        """A name or version as a peer sent it: `identifier` for a string, nothing for anything else
        (a tool name `{"x": "secret"}` is a caller's value, not a name)."""
        if not isinstance(value, str):
            return None
        bound = self._limit if limit is None else limit
        if self._redact is None and type(value) is str and len(value) <= bound and value.isascii():
            return value  # the common case, answered here: every request names its client
        return self.text(value, bound)

    def message(self, value: object, limit: int | None = None) -> str | None:
        """An error text a caller, tool or peer wrote: None unless error messages are opted in."""
        return self.text(value, limit) if self.messages else None

    def progress(self, message: object) -> str | None:
        """A progress report's message: content, recorded unless left out."""
        return self.text(message) if self.progress_messages and message is not None else None

    def uri(self, value: object) -> str | None:
        """A resource URI: without userinfo, query values and fragment unless raw URIs are opted in."""
        uri = value if type(value) is str else clean(value, self._limit)
        if not self.raw_uris:
            uri = scrub(uri)
        if self._redact is None and len(uri) <= self._limit and uri.isascii():
            return uri  # the common case: nothing to redact, nothing to cut or repair
        return self.text(uri)

    # -- captured content -----------------------------------------------------------------------

    def content(self, value: object) -> str | None:
        """Captured arguments or a result, as `redact` leaves them, in JSON cut to `max_content_length`."""
        found = self.redacted(value)
        if found is None:
            return None
        try:
            text = json.dumps(found, default=_json_default, ensure_ascii=False)
        except Exception as exc:  # a value JSON cannot hold (a cycle, a NaN key): nothing, named by type
            _contained("json", type(exc))
            return None
        return clean(text, self._content_limit)

    # -- errors ---------------------------------------------------------------------------------

    def description(self, exc: BaseException | None) -> str | None:
        """A span status description: the error's message when opted in, else the exception's type."""
        if exc is None:
            return None
        if self.messages:
            try:
                raw = exc.error.message if isinstance(exc, ProtocolError) else str(exc)
            except Exception:  # a __str__ that raises is the exception's problem, never the call's
                raw = None
            found = self.message(raw, semconv.MAX_STATUS_DESCRIPTION) if raw else None
            if found:
                return found
        return type(exc).__qualname__

    def exception_event(self, exc: BaseException) -> dict[str, Any]:
        """The `exception` event's attributes: type and where raised; the message only when opted in."""
        attrs: dict[str, Any] = {EXCEPTION_TYPE: type(exc).__qualname__}
        if self.messages:
            message = self.message(_str(exc))
            if message:
                attrs[EXCEPTION_MESSAGE] = message
            stack = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            found = self._redacted_text(stack)  # the whole traceback: a cut could split what `redact` looks for
            if found is not None:
                attrs[EXCEPTION_STACKTRACE] = clean_tail(found, self._limit)
        else:
            attrs[EXCEPTION_STACKTRACE] = clean_tail(frames_only(exc), self._limit)
        return attrs


_WHOLE = 1 << 62
"""No cut: a value converted to text is redacted whole, and cut after."""


def _json_default(value: object) -> str:
    return clean(value, _WHOLE)


DEFAULT = Privacy(Settings())
"""The default settings' step, for a path that has no settings at hand: never a way around it."""


def _str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return ""
