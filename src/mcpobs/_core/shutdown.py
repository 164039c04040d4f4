"""Flush the providers `configure()` made, at exit and on SIGTERM, within a deadline.

The SDK's providers flush in `atexit` with no overall bound: behind a collector that accepts
connections and never answers, a short script exited 15 s late and an HTTP server took 40 s to
stop after SIGTERM, and a stdio server was killed by its host (the MCP SDK's stdio client
closes stdin, waits 2 s, sends SIGTERM, waits 2 s more, then SIGKILL) with its telemetry
unsent. Here each provider shuts down on a thread of its own (traces and metrics do not wait
for each other), and the process waits for them at most the deadline (`shutdown_timeout`,
`OTEL_PYTHON_MCP_SHUTDOWN_TIMEOUT`, 3 s by default: inside a stdio host's 4 s), then exits
with whatever could be flushed.

SIGTERM never flushes inside the signal handler: the handler runs on the main thread between
two bytecodes, possibly while that thread holds an SDK lock the flush needs (a SIGTERM landing
during a metric record stalled 30 s and lost the final metrics). The handler only starts the
flush on a thread and returns, so the interrupted code runs on and releases its locks; the
flush thread then ends the process by SIGTERM, as it would have died without mcpobs (the
handler has put the default action back, so a second SIGTERM kills at once).
"""

from __future__ import annotations

import atexit
import os
import signal
import threading
import time
from typing import Any

from mcpobs._core.guard import logger

_state_lock = threading.Lock()
_flushing: threading.Thread | None = None
"""The flush under way (from SIGTERM or at exit), if any: nothing flushes twice."""


def install(providers: list[Any], deadline: float) -> None:
    """Flush `providers` within `deadline` seconds at exit, and on SIGTERM when nobody else handles it."""
    if not providers:
        return
    atexit.register(_at_exit, providers, deadline)
    if threading.current_thread() is not threading.main_thread():
        return  # Python allows signal handlers only from the main thread
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return  # the application (or a server such as uvicorn, which re-raises it) handles SIGTERM

    def on_sigterm(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM kills at once
        # Nothing else here. When a flush at exit is already under way, this SIGTERM (a stdio
        # host's, 2 s after it closed stdin) changes nothing: that flush ends within its deadline.
        _start(providers, deadline, terminate=True)

    signal.signal(signal.SIGTERM, on_sigterm)


def flush_within(providers: list[Any], deadline: float) -> bool:
    """Shut every provider down in parallel; True if all finished within `deadline` seconds."""
    ends = time.monotonic() + deadline
    millis = max(int(deadline * 1000), 1)
    workers = [
        threading.Thread(target=_shutdown, args=(p, millis), name="mcpobs-flush", daemon=True) for p in providers
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(max(0.0, ends - time.monotonic()))
    late = [type(p).__name__ for p, w in zip(providers, workers, strict=True) if w.is_alive()]
    if late:
        logger.warning(
            "mcpobs: telemetry was not flushed within %.1f s (%s still exporting); exiting without it. "
            "Check the collector, or set OTEL_PYTHON_MCP_SHUTDOWN_TIMEOUT (seconds).",
            deadline,
            ", ".join(late),
        )
    return not late


def _shutdown(provider: Any, millis: int) -> None:
    try:
        try:
            provider.shutdown(timeout_millis=millis)
        except TypeError:  # the TracerProvider's shutdown takes no timeout
            provider.shutdown()
    except Exception as exc:
        logger.debug("mcpobs: flush at shutdown failed: %r", exc)


def _start(providers: list[Any], deadline: float, terminate: bool) -> threading.Thread | None:
    """Start the one flush; None when one is already under way."""
    global _flushing
    with _state_lock:
        if _flushing is not None:
            return None
        _flushing = threading.Thread(
            target=_flush_then_terminate if terminate else flush_within,
            args=(providers, deadline),
            name="mcpobs-shutdown",
            daemon=True,
        )
    _flushing.start()
    return _flushing


def _flush_then_terminate(providers: list[Any], deadline: float) -> None:
    flush_within(providers, deadline)
    os.kill(os.getpid(), signal.SIGTERM)  # the default action again: the process dies of SIGTERM, as before


def _at_exit(providers: list[Any], deadline: float) -> None:
    flushing = _start(providers, deadline, terminate=False) or _flushing
    if flushing is not None:
        flushing.join(deadline + 0.5)  # the flush bounds itself; the margin covers its own bookkeeping


def reset() -> None:
    """Forget a finished flush (tests that configure more than once in one process)."""
    global _flushing
    with _state_lock:
        _flushing = None
