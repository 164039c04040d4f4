"""Every change mcpobs makes to the SDK, and how to undo it.

Most changes are wrappers (`Patch`: one wrapt wrapper on one named seam). The rest edit a
live object: a server's middleware chain, its state codec, an app's ASGI middleware. Each
of those records its undo step here as it is made. The instrumentor owns one `Changes` per
`instrument()`, and `uninstrument()` undoes it all, last change first.

Every wrapped seam is a row of the inventory (`_core/inventory.py`), resolved through it. A
seam that is missing (a private name the SDK renamed) is a logged warning, once, and the rest
of the instrumentation still works. A seam of an optional framework (FastMCP) not imported
yet is wrapped when it is imported, so `instrument()` never imports a framework itself.

Every wrapper honours OpenTelemetry's `suppress_instrumentation()`: inside it, the call goes
straight through. Setup seams (a server or transport being built) are the exception: a
server built there is still set up, and records once the suppression ends.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

import wrapt
from opentelemetry.instrumentation import utils as otel_utils
from opentelemetry.instrumentation.utils import is_instrumentation_enabled, unwrap

from mcpobs._core import inventory, runtime_context
from mcpobs._core.guard import guarded

Wrapper = Callable[[Any, Any, Any, Any], Any]


@dataclass(frozen=True)
class Patch:
    """One wrapper on one inventory row: the row says where the seam is, the wrapper what to do."""

    seam: inventory.Seam
    wrapper: Wrapper
    setup: bool = False
    """Sets a server or transport up: runs under `suppress_instrumentation()` too."""

    @classmethod
    def of(cls, seam: inventory.Seam, wrapper: Wrapper, *, setup: bool = False) -> Patch:
        return cls(seam, wrapper, setup)


@dataclass(frozen=True)
class Applied:
    owner: Any
    attribute: str
    inherited: bool = False
    """The class had the function from a base only (mcp 1.x's `ServerSession.send_request` is
    `BaseSession`'s): undoing deletes the wrapper rather than pinning the base's function on the class."""


def _reading(first: str, second: str) -> Callable[[], bool]:
    """Whether instrumentation is enabled, read off the current context taken once."""
    get_current = runtime_context.get_current

    def enabled() -> bool:
        current = get_current()
        return not (current.get(first) or current.get(second))

    return enabled


def _suppression_keys() -> tuple[str, str] | None:
    """OpenTelemetry's two suppression keys, if reading them off the context answers as its own check.

    `is_instrumentation_enabled` looks the context up once per key; reading both keys off the
    context taken once (straight from its variable: `runtime_context`) is cheaper, and it runs
    in every wrapper and at every server request. The keys are OpenTelemetry's private names,
    so the reading is proved against OpenTelemetry's own check, once, inside and outside
    `suppress_instrumentation()`; None (OpenTelemetry's own check is used) if not.
    """
    try:
        first = otel_utils._SUPPRESS_INSTRUMENTATION_KEY  # pyright: ignore[reportPrivateUsage]
        second = otel_utils._SUPPRESS_INSTRUMENTATION_KEY_PLAIN  # pyright: ignore[reportPrivateUsage]
        enabled = _reading(first, second)
        outside = enabled() == is_instrumentation_enabled()
        with otel_utils.suppress_instrumentation():
            inside = enabled() == is_instrumentation_enabled() and not enabled()
    except Exception:
        return None
    return (first, second) if outside and inside else None


_KEYS = _suppression_keys()

instrumentation_enabled = is_instrumentation_enabled if _KEYS is None else _reading(*_KEYS)
"""False inside OpenTelemetry's `suppress_instrumentation()`: see `_suppression_keys`."""


def _honouring(changes: Changes) -> Callable[[], bool]:
    """When a wrapper runs: not inside OpenTelemetry's `suppress_instrumentation()`, and not once
    undone (a module that imported a wrapped function by name still holds it).

    wrapt asks it before each call (its `enabled`) and calls the wrapped function straight
    when it answers False: no Python frame of mcpobs's between the two, and the check inlined.
    """
    if _KEYS is None:
        enabled = is_instrumentation_enabled

        def honouring_slowly() -> bool:
            return changes.active and enabled()

        return honouring_slowly
    first, second = _KEYS
    get_current = runtime_context.get_current

    def honouring() -> bool:
        if not changes.active:
            return False
        current = get_current()
        return not (current.get(first) or current.get(second))

    return honouring


class Changes:
    """What one `instrument()` changed: the wrapped seams and the undo steps of live edits."""

    def __init__(self) -> None:
        self.wrapped: list[Applied] = []
        self._undo: list[tuple[str, weakref.ref[Any] | None, Callable[..., None]]] = []
        self._pruned_at = 64
        self.active = True
        self._enabled = _honouring(self)

    def wrap(self, patches: list[Patch]) -> None:
        """Wrap each patch's seam where its inventory row finds it."""
        for patch in patches:
            seam = patch.seam
            if not inventory.applies(seam):  # another release line's seam, or a framework not installed
                continue
            if seam.package != "mcp" and seam.module not in sys.modules:  # installed, not imported yet
                wrapt.register_post_import_hook(partial(self._imported, seam, patch), seam.module)
                continue
            self._apply(seam, patch)

    def _imported(self, seam: inventory.Seam, patch: Patch, module: Any) -> None:
        if self.active:  # a hook cannot be unregistered: after `undo()` it does nothing
            with guarded("wrap " + seam.where):
                self._apply(seam, patch)

    def _apply(self, seam: inventory.Seam, patch: Patch) -> None:
        found = inventory.resolve(seam)
        if found is None:
            return
        owner, attribute = found
        inherited = isinstance(owner, type) and attribute not in vars(owner)
        enabled = None if patch.setup else self._enabled
        wrapt.wrap_object(owner, attribute, wrapt.FunctionWrapper, (patch.wrapper, enabled))
        self.wrapped.append(Applied(owner, attribute, inherited))

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
        self.active = False
        for item in reversed(self.wrapped):
            with guarded("unwrap " + item.attribute):
                owned = cast("dict[str, object]", vars(item.owner)) if item.inherited else {}
                held = owned.get(item.attribute)
                inner: Any = getattr(held, "__wrapped__", None)
                if isinstance(held, wrapt.FunctionWrapper) and not isinstance(inner, wrapt.ObjectProxy):
                    delattr(item.owner, item.attribute)  # ours, on top of the base's own: inherited again
                else:
                    unwrap(item.owner, item.attribute)
        self.wrapped = []
        steps, self._undo = self._undo, []
        for where, ref, undo in reversed(steps):
            with guarded(where):
                if ref is None:
                    undo()
                elif (target := ref()) is not None:
                    undo(target)
