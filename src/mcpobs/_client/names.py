"""Bounds the tool and prompt names a client puts in span names and metric labels."""

from __future__ import annotations

from collections.abc import Container
from typing import Any, cast

from mcpobs import semconv as S
from mcpobs._client.memory import SessionMemory
from mcpobs._core import inventory as I
from mcpobs._core.text import clean


class ClientNames:
    """A client sends whatever name its host (or a model) chose, and a server lists whatever it likes.

    A name reaches a span name or a label only when this session, or an earlier session to the
    same server, listed it (tools/list, prompts/list), it is at most `MAX_NAME_LENGTH` characters of valid text, and it is among
    the first `MAX_LEARNED_NAMES` distinct names admitted in this process: the server's caps,
    held across sessions, so a server listing new names to every session adds no series past
    the cap. Everything else is `_OTHER`.
    """

    __slots__ = ("_admitted",)

    def __init__(self) -> None:
        self._admitted: set[str] = set()

    def bound(self, name: object, listed: Container[str] | None, shared: Container[str] | None = None) -> str:
        """`listed`: what this session listed; `shared`: what any session listed from its server."""
        if not isinstance(name, str) or not ((listed and name in listed) or (shared and name in shared)):
            return S.OTHER
        if name in self._admitted:
            return name
        if len(self._admitted) >= S.MAX_LEARNED_NAMES or len(name) > S.MAX_NAME_LENGTH:
            return S.OTHER
        if not name.isascii() and clean(name, S.MAX_NAME_LENGTH) != name:
            return S.OTHER  # not valid text: it could not be exported
        self._admitted.add(name)
        return name


def listed(
    session: Any, method: str, remembered: SessionMemory | None
) -> tuple[Container[str] | None, Container[str] | None]:
    """The names listed for `method`'s target (its tools, or its prompts): by this session, and
    by any session of this process from the same server (`catalog`)."""
    catalog = remembered.catalog if remembered is not None else None
    if method == "tools/call":
        # The SDK's own record of the session's listings (it lists to validate a result, too).
        found = getattr(session, I.CLIENT_OUTPUT_SCHEMAS.attribute, None)
        own = cast("dict[str, object]", found) if isinstance(found, dict) else None
        return own, catalog.tools if catalog is not None else None
    return None, catalog.prompts if catalog is not None else None
