"""Bounds the tool and prompt names a client puts in span names and metric labels."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpobs import semconv as S


class ClientNames:
    """A client sends whatever name its host (or a model) chose.

    Once the session has listed the server's tools, only listed tools are named; before that
    (and for prompts) the first `MAX_LEARNED_NAMES` distinct names of at most
    `MAX_NAME_LENGTH` characters are kept; the rest become `_OTHER`.
    """

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def bound(self, name: object, listed: Mapping[str, Any] | None = None) -> str:
        if not isinstance(name, str):
            return S.OTHER
        if listed:
            return name if name in listed else S.OTHER
        if len(name) > S.MAX_NAME_LENGTH:
            return S.OTHER
        if name in self._seen:
            return name
        if len(self._seen) < S.MAX_LEARNED_NAMES:
            self._seen.add(name)
            return name
        return S.OTHER
