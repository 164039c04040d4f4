"""The measured window: a settled heap, then the counts started and zeroed, the calls, the dump."""

from __future__ import annotations

import gc
import time
from types import TracebackType

from harness.callgrind import Callgrind


class Window:
    """`with Window(callgrind): <the calls>`, then `cpu` and `wall` hold the seconds the calls took.

    A full collection first, and what survives it frozen: otherwise a count holds more or fewer
    whole-heap collections by the call count, by chance (up to +850k instructions per call over
    50 calls seen). Under callgrind the counts start and are zeroed on entry and dumped on exit,
    so the one dump holds the calls alone, on every thread.
    """

    def __init__(self, callgrind: Callgrind | None, settle: bool = True) -> None:
        self.callgrind, self.settle = callgrind, settle
        self.cpu = self.wall = 0.0

    def __enter__(self) -> Window:
        if self.settle:
            gc.collect()
            gc.freeze()
        if self.callgrind:
            self.callgrind(Callgrind.START, Callgrind.ZERO)
        self.cpu, self.wall = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.cpu, self.wall = time.process_time() - self.cpu, time.perf_counter() - self.wall
        if self.callgrind:
            self.callgrind(Callgrind.DUMP, Callgrind.STOP)
