"""Every change mcpobs makes to the SDK, and how to undo it.

Most changes are wrappers (`Patch`: one wrapt wrapper on one named seam). The rest edit a
live object: a server's middleware chain, its state codec, an app's ASGI middleware. Each
of those records its undo step here as it is made. The instrumentor owns one `Changes` per
`instrument()`, and `uninstrument()` undoes it all, last change first.

Every wrapped seam is a row of the inventory (`_core/inventory.py`), resolved through it. A
seam that is missing (a private name the SDK renamed) is a logged warning, once, and the rest
of the instrumentation still works.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import wrapt
from opentelemetry.instrumentation.utils import unwrap

from mcpobs._core import inventory
from mcpobs._core.guard import guarded, logger

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
    """Through the patch's inventory row (its alternates too); a patch without a row is a bug of ours."""
    seam = inventory.row(patch.module, patch.name)
    if seam is None:
        logger.warning("mcpobs: %s.%s is not in mcpobs's seam inventory; not wrapped.", patch.module, patch.name)
        return None
    return inventory.resolve(seam)


class Changes:
    """What one `instrument()` changed: the wrapped seams and the undo steps of live edits."""

    def __init__(self) -> None:
        self.wrapped: list[Applied] = []
        self._undo: list[tuple[str, weakref.ref[Any] | None, Callable[..., None]]] = []
        self._pruned_at = 64

    def wrap(self, patches: list[Patch]) -> None:
        for patch in patches:
            found = _resolve(patch)
            if found is None:
                continue
            owner, attribute = found
            wrapt.wrap_function_wrapper(owner, attribute, patch.wrapper)
            self.wrapped.append(Applied(owner, attribute))

    def on_undo(self, where: str, undo: Callable[..., None], target: Any = None) -> None:
        """Record how to undo a change just made; `undo(target)` runs only if `target` still lives.

        The target is held weakly: a server dropped by the application is not kept alive for this.
        """
        ref = weakref.ref(target) if target is not None else None
        self._undo.append((where, ref, undo))
        if len(self._undo) >= self._pruned_at:  # a process building many servers: drop dead entries
            self._undo = [entry for entry in self._undo if entry[1] is None or entry[1]() is not None]
            self._pruned_at = max(64, 2 * len(self._undo))

    def undo(self) -> None:
        """Unwrap every seam, then undo the live edits, last first."""
        for item in reversed(self.wrapped):
            with guarded("unwrap " + item.attribute):
                unwrap(item.owner, item.attribute)
        self.wrapped = []
        steps, self._undo = self._undo, []
        for where, ref, undo in reversed(steps):
            with guarded(where):
                if ref is None:
                    undo()
                elif (target := ref()) is not None:
                    undo(target)
