"""Caches with a bound that evict their oldest entry instead of starting over.

A cache that empties itself when full turns one request past its bound into thousands of
recomputations (every key misses at once); evicting the oldest entry keeps every recent one.
A plain dict keeps insertion order, so the oldest key is the first: no bookkeeping on a hit.

A fixed bound is still a cliff for a catalog larger than it (a cycle through 5,000 tools
misses every call in a 4,096-entry cache), so a cache of a server's names grows with what the
server registers: `known` says how many, and the bound is then at least twice that. Names a
caller makes up never reach these caches as themselves (they are bounded to `_OTHER` first).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def put(cache: dict[K, V], key: K, value: V, bound: int, known: Callable[[], int] | None = None) -> V:
    """Store `value` under a `key` that missed, first evicting the oldest entry when full.

    Full is `bound` entries, or twice `known()` when that is more (asked only once past `bound`).
    """
    if len(cache) >= bound and (known is None or len(cache) >= 2 * known()):
        del cache[next(iter(cache))]
    cache[key] = value
    return value
