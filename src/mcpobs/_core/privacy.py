"""The one privacy step every text from outside mcpobs passes before it is recorded.

A caller, a tool or a peer writes text mcpobs could record: an exception's message and the
traceback that repeats it, a JSON-RPC error's message, a status description built from
either, a resource URI, a progress message, a cancellation reason. Any of them can carry a
card number, a token or an email address. Each goes through `Privacy` here, nowhere else:

- error texts (exception messages, the message line of a traceback, JSON-RPC error messages,
  status descriptions) are left out unless `record_error_messages=True`; the exception's type,
  the code, the boundary and the traceback's frames (code locations) are always kept;
- resource URIs lose their userinfo and every query value (and fragment) unless
  `raw_resource_uris=True` (OpenTelemetry's rule for `url.full`, applied to every query key);
- a peer's cancellation reason is an error text like the others (opt-in);
- progress messages are content, recorded unless `record_progress_messages=False`;
- whatever is recorded passes the user's `redact` first (a `str` in, what may be recorded out;
  None or a raise records nothing), then `text.clean` (bounded, valid UTF-8).

Captured tool arguments and results (`content`) go through the same `redact`.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from opentelemetry.semconv.attributes.exception_attributes import (
    EXCEPTION_MESSAGE,
    EXCEPTION_STACKTRACE,
    EXCEPTION_TYPE,
)

from mcpobs import semconv
from mcpobs._core.config import Settings
from mcpobs._core.guard import logger
from mcpobs._core.sdk import ProtocolError
from mcpobs._core.text import clean, clean_tail

REDACTED = "REDACTED"
"""What replaces a URI's userinfo parts, query values and fragment (OpenTelemetry's `url.full` word)."""

_warned_redact: set[str] = set()


def _redact_failed(exc: BaseException) -> None:
    # Only the type: the exception's text may be the very value `redact` was asked to hide.
    name = type(exc).__qualname__
    if name not in _warned_redact:
        _warned_redact.add(name)
        logger.warning(
            "mcpobs: redact raised %s on a text it was given, so that text is not recorded. redact is called "
            "with strings (error messages, resource URIs, progress messages) as well as with captured "
            "arguments and results: return strings unchanged if it only knows dicts.",
            name,
        )


class Privacy:
    """Built once per `instrument()` from its settings; read-only afterwards."""

    __slots__ = ("_limit", "_redact", "messages", "progress_messages", "raw_uris")

    def __init__(self, settings: Settings) -> None:
        self._redact: Callable[[Any], Any] | None = settings.redact
        self._limit = settings.max_attribute_length
        self.messages = settings.record_error_messages
        self.raw_uris = settings.raw_resource_uris
        self.progress_messages = settings.record_progress_messages

    def text(self, value: object, limit: int | None = None) -> str | None:
        """Text from outside that may be recorded: through `redact`, then `clean`; None for nothing."""
        if self._redact is not None:
            value = self._redacted(value)
            if value is None:
                return None
        return clean(value, self._limit if limit is None else limit)

    def _redacted(self, value: object) -> object | None:
        """`value` as the user's `redact` returns it (the whole text, before any cut); None for nothing."""
        redact = self._redact
        if redact is None:
            return value
        try:
            return redact(value)
        except Exception as exc:
            _redact_failed(exc)
            return None

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
            uri = scrub_uri(uri)
        if self._redact is None and len(uri) <= self._limit and uri.isascii():
            return uri  # the common case: nothing to redact, nothing to cut or repair
        return self.text(uri)

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
            found = self._redacted(stack)  # the whole traceback: a cut could split what `redact` looks for
            if found is not None:
                attrs[EXCEPTION_STACKTRACE] = clean_tail(found if type(found) is str else _str_of(found), self._limit)
        else:
            attrs[EXCEPTION_STACKTRACE] = clean_tail(frames_only(exc), self._limit)
        return attrs


DEFAULT = Privacy(Settings())
"""The default settings' step, for a path that has no settings at hand: never a way around it."""


def _str_of(value: object) -> str:
    try:
        return str(value)
    except Exception:
        return ""


def _str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return ""


_CAUSE = "\nThe above exception was the direct cause of the following exception:\n\n"
_CONTEXT = "\nDuring handling of the above exception, another exception occurred:\n\n"


def frames_only(exc: BaseException) -> str:
    """A traceback as Python prints it, with every exception's message and notes left out.

    The frames (file, line, function, the source line) are code and say where it failed; the
    message line after them ("ValueError: card 4111… declined") is whatever the code put there.
    Chained causes are kept the same way (their messages are text too).
    """
    chain: list[tuple[BaseException, str]] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    link = ""
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append((current, link))
        if current.__cause__ is not None:
            current, link = current.__cause__, _CAUSE
        elif current.__context__ is not None and not current.__suppress_context__:
            current, link = current.__context__, _CONTEXT
        else:
            current = None
    parts: list[str] = []
    for index, (one, _) in enumerate(reversed(chain)):
        if index:
            parts.append(chain[len(chain) - index][1])
        if one.__traceback__ is not None:
            parts.append("Traceback (most recent call last):\n")
            parts.extend(traceback.format_list(traceback.extract_tb(one.__traceback__)))
        kind = type(one)
        module = kind.__module__
        parts.append(
            f"{kind.__qualname__ if module in ('builtins', '__main__') else f'{module}.{kind.__qualname__}'}\n"
        )
    return "".join(parts)


def scrub_uri(uri: str) -> str:
    """`uri` without userinfo (`REDACTED:REDACTED@`), query values and fragment (`REDACTED`).

    OpenTelemetry's rule for `url.full` (https://opentelemetry.io/docs/specs/semconv/registry/attributes/url/)
    redacts the userinfo and the values of a list of signing keys (`AWSAccessKeyId`, `Signature`,
    `sig`, `X-Goog-Signature`), keeping the keys; a resource URI's query is whatever its server
    chose (`?token=`, `?api_key=`), so every value is redacted here, every key kept.
    """
    if "@" not in uri and "?" not in uri and "#" not in uri:
        return uri
    return _scrub(uri)


@lru_cache(maxsize=256)
def _scrub(uri: str) -> str:
    base, hash_, fragment = uri.partition("#")
    base, mark, query = base.partition("?")
    start = base.find("//")
    if start != -1:
        end = base.find("/", start + 2)
        end = len(base) if end == -1 else end
        authority = base[start + 2 : end]
        if "@" in authority:
            host = authority.rpartition("@")[2]
            base = f"{base[: start + 2]}{REDACTED}:{REDACTED}@{host}{base[end:]}"
    if mark:
        pairs: list[str] = []
        for part in query.split("&"):
            key, equals, _ = part.partition("=")
            pairs.append(f"{key}={REDACTED}" if equals else (REDACTED if part else part))
        base = f"{base}?{'&'.join(pairs)}"
    if hash_:
        base = f"{base}#{REDACTED}" if fragment else f"{base}#"
    return base
