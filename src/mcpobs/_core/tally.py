"""Counters added up in process and handed to the SDK when a reader collects.

A synchronous OpenTelemetry `Counter.add` costs several microseconds in the Python SDK: it
re-validates and re-hashes the attributes on every call. Counting requests is on every
call's path, so mcpobs keeps each counter's running totals per label set and reports them
through an `ObservableCounter` callback. What a reader exports is the same monotonic,
cumulative sum (and delta, when a reader asks for it); the per-call cost is one dict update.
Counters carry no exemplars this way; the duration histograms carry them.

A forked child (a gunicorn `--preload` worker, `multiprocessing`) starts every tally at zero
with a fresh lock: the parent's counts are the parent's, exported under its own
`service.instance.id` (the SDK gives the child another), and a lock some thread of the parent
held at the fork would never be released in the child.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from opentelemetry.metrics import CallbackOptions, Meter, Observation

from mcpobs import semconv as S
from mcpobs._core import labels as _labels
from mcpobs._core.bounded import put

_OVERFLOW: Mapping[str, Any] = {S.OTEL_METRIC_OVERFLOW: True}
_OVERFLOW_KEY = tuple(_OVERFLOW.items())
_MAX_SHARED = 4096
"""Shared label dicts remembered by identity (`Tally.add_shared`); past it the oldest is forgotten."""


class Tally:
    """One monotonic counter: `add()` on the hot path, totals read at collection."""

    __slots__ = ("__weakref__", "_lock", "_shared", "_totals")

    def __init__(self) -> None:
        _every.add(self)
        self._lock = threading.Lock()
        self._totals: dict[tuple[Any, ...], list[Any]] = {}
        """Label items -> [labels, running total]."""
        self._shared: dict[int, tuple[Mapping[str, Any], list[Any]]] = {}
        """id(a shared label dict) -> (that dict, its entry in `_totals`): see `add_shared`."""

    def add(self, amount: int, labels: Mapping[str, Any]) -> None:
        key = tuple(labels.items())
        with self._lock:
            entry = self._entry(key, labels)
            entry[1] += amount

    def add_shared(self, amount: int, labels: Mapping[str, Any]) -> None:
        """`add` for a label dict that is shared and never mutated (a `labels.LabelSets` one).

        Its entry is found by the dict's identity, without building and hashing its items on
        every call. The dict is held here, so its id cannot be reused by another while cached.
        """
        held = self._shared.get(id(labels))
        if held is not None and held[0] is labels:
            entry = held[1]
        else:
            key = tuple(labels.items())
            with self._lock:
                entry = self._entry(key, labels)
                # Past the floor, twice what the label sets hold: they grow with their catalogs.
                put(self._shared, id(labels), (labels, entry), _MAX_SHARED, _labels.held)
        with self._lock:
            entry[1] += amount

    def _entry(self, key: tuple[Any, ...], labels: Mapping[str, Any]) -> list[Any]:
        """The [labels, total] of `key`, made if new (the overflow series once full). Under the lock."""
        entry = self._totals.get(key)
        if entry is None:
            if len(self._totals) >= S.MAX_COUNTER_SERIES:
                key, labels = _OVERFLOW_KEY, _OVERFLOW
            entry = self._totals.setdefault(key, [dict(labels), 0])
        return entry

    def observe(self, options: CallbackOptions) -> Iterable[Observation]:
        with self._lock:
            return [Observation(total, labels) for labels, total in self._totals.values()]

    def _start_over(self) -> None:
        """In a forked child: no count of the parent's, no lock of the parent's."""
        self._lock = threading.Lock()
        self._totals = {}
        self._shared = {}


_every: weakref.WeakSet[Tally] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for each in list(_every):
        each._start_over()  # pyright: ignore[reportPrivateUsage]


os.register_at_fork(after_in_child=_after_fork_in_child)


_by_meter: weakref.WeakKeyDictionary[Meter, dict[str, Tally]] = weakref.WeakKeyDictionary()
"""A meter keeps the first callback registered under a name and drops later ones, so a
second `instrument()` on the same meter must add to the same totals."""


def tally(meter: Meter, spec: S.MetricSpec) -> Tally:
    """The tally behind `spec`'s counter on `meter`, registered with the meter once."""
    counters = _by_meter.setdefault(meter, {})
    found = counters.get(spec.name)
    if found is None:
        found = counters[spec.name] = Tally()
        meter.create_observable_counter(spec.name, callbacks=[found.observe], unit=spec.unit, description=spec.brief)
    return found
