"""Rounds and medians, and workers side by side: how the scripts spread runs over time and cores.

Timed figures move with whatever else the machine does, so each configuration runs once per
round, the configurations interleaved, and a figure is the median over the rounds: a noisy
minute falls on every configuration alike. Instruction counts do not move with the machine,
so their workers run side by side, as many as there are cores.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


def interleaved(rounds: int, configs: Iterable[str], measure: Callable[[str], T]) -> dict[str, list[T]]:
    """`measure(config)` for every configuration, once per round, round by round."""
    configs = list(configs)
    samples: dict[str, list[T]] = {c: [] for c in configs}
    for _ in range(rounds):
        for config in configs:
            samples[config].append(measure(config))
    return samples


def medians(samples: dict[str, list[dict[str, Any]]], key: str) -> dict[str, float]:
    """Per configuration, the median of one figure over its rounds."""
    return {c: statistics.median(s[key] for s in found) for c, found in samples.items()}


def side_by_side(keys: Sequence[K], run: Callable[[K], T]) -> Iterator[tuple[K, T]]:
    """`run(key)` for every key, as many at once as there are cores; yields them in `keys`' order as each is ready."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        futures = [(key, pool.submit(run, key)) for key in keys]
        for key, future in futures:
            yield key, future.result()


def by_mode(
    modes: Sequence[str], configs: Sequence[str], run: Callable[[str, str], T]
) -> Iterator[tuple[str, dict[str, T]]]:
    """`run(mode, config)` for every pair side by side; yields each mode's results by configuration, in order."""
    runs = side_by_side([(mode, c) for mode in modes for c in configs], lambda key: run(*key))
    for mode in modes:
        yield mode, {c: next(runs)[1] for c in configs}


def timed_by_mode(
    rounds: int,
    modes: Sequence[str],
    configs: Sequence[str],
    spawn: Callable[[str, str], T],
    prepare: Callable[[str], object] = lambda mode: None,
) -> Iterator[tuple[str, dict[str, list[T]]]]:
    """Per mode, in order: `prepare(mode)`, then every configuration's `spawn(config, mode)` over interleaved rounds."""
    for mode in modes:
        prepare(mode)
        yield mode, interleaved(rounds, configs, lambda config, mode=mode: spawn(config, mode))
