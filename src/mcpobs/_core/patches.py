"""Wrap narrowly, unwrap completely.

Each patch is one wrapper on one named seam of the SDK. A seam that is missing (a private
name the SDK renamed) is a logged warning and the rest of the instrumentation still works.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import wrapt
from opentelemetry.instrumentation.utils import unwrap

from mcpobs._core.guard import logger

Wrapper = Callable[[Any, Any, Any, Any], Any]


@dataclass(frozen=True)
class Patch:
    module: str
    name: str
    """`Class.method` or a module-level function name."""
    wrapper: Wrapper


@dataclass(frozen=True)
class Applied:
    owner: Any
    attribute: str


def _resolve(patch: Patch) -> tuple[Any, str] | None:
    try:
        owner: Any = importlib.import_module(patch.module)
        *path, attribute = patch.name.split(".")
        for part in path:
            owner = getattr(owner, part)
        getattr(owner, attribute)
    except (ImportError, AttributeError) as exc:
        logger.warning(
            "mcpobs: cannot instrument %s.%s (%s); this mcp version may have moved it. "
            "The rest of the instrumentation still works.",
            patch.module,
            patch.name,
            exc,
        )
        return None
    return owner, attribute


def apply(patches: list[Patch]) -> list[Applied]:
    applied = []
    for patch in patches:
        found = _resolve(patch)
        if found is None:
            continue
        owner, attribute = found
        wrapt.wrap_function_wrapper(owner, attribute, patch.wrapper)
        applied.append(Applied(owner, attribute))
    return applied


def remove(applied: list[Applied]) -> None:
    for item in reversed(applied):
        unwrap(item.owner, item.attribute)
