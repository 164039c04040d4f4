"""Caches with a bound that evict their oldest entry instead of starting over.

A cache that empties itself when full turns one request past its bound into thousands of
recomputations (every key misses at once); evicting the oldest entry keeps every recent one.
A plain dict keeps insertion order, so the oldest key is the first: no bookkeeping on a hit.
"""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def put(cache: dict[K, V], key: K, value: V, bound: int) -> V:
    """Store `value` under a `key` that missed, first evicting the oldest entry when `bound` are held."""
    if len(cache) >= bound:
        del cache[next(iter(cache))]
    cache[key] = value
    return value
