"""Flush the providers `configure()` made, at exit and on SIGTERM, within a deadline.

The SDK's providers flush in `atexit` with no overall bound: behind a collector that accepts
connections and never answers, a short script exited 15 s late and an HTTP server took 40 s to
stop after SIGTERM, and a stdio server was killed by its host (the MCP SDK's stdio client
closes stdin, waits 2 s, sends SIGTERM, waits 2 s more, then SIGKILL) with its telemetry
unsent. Here each provider shuts down on a thread of its own (traces and metrics do not wait
for each other), and the process waits for them at most the deadline (`shutdown_timeout`,
`OTEL_PYTHON_MCP_SHUTDOWN_TIMEOUT`, 3 s by default: inside a stdio host's 4 s), then exits
with whatever could be flushed. Python 3.12.0 and 3.12.1 start no thread at exit: there the
flush at exit runs on the exiting thread, the providers one after another within the deadline.

SIGTERM never flushes inside the signal handler: the handler runs on the main thread between
two bytecodes, possibly while that thread holds an SDK lock the flush needs (a SIGTERM landing
during a metric record stalled 30 s and lost the final metrics). The handler only starts the
flush on a thread and returns, so the interrupted code runs on and releases its locks; the
flush thread then ends the process by SIGTERM, as it would have died without mcpobs. A SIGTERM
that comes while it flushes waits for it (`hold_sigterm`: hypercorn sends its workers two); one
after the deadline kills at once.

A server that owns SIGTERM may never let the process reach either: `uvicorn --workers` and
gunicorn's uvicorn worker put the default action back when they have stopped and raise the
signal again, so the process dies without `atexit` (and a handler installed before gunicorn
forked is reset in the worker). What every such server does reach is the end of the app's
lifespan: `flush_before_stop` is called there (`_server/lifespan.py`). It force-flushes,
without shutting down (the process may serve again, as a test harness does), the providers
mcpobs made and those the application gave; a flush at exit that follows within moments
takes what is left of the same deadline: the flushes of one stop take one deadline together.

Both the SIGTERM flush and the one at exit first end the calls still running as `stopped`
(`stop.py`, through `on_stop`): the process will not wait for them, and a call that leaves no
span orphans the progress spans already exported under it.

A forked child (gunicorn `--preload`, `multiprocessing`) starts with no flush under way: the
SDK restarts its exporter threads and gives the child its own `service.instance.id`.
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
_made: list[Any] = []
"""The providers `configure()` made (flushed at the end of a lifespan as well)."""
_lifespan_flush: tuple[float, float] | None = None
"""When the last flush at the end of a lifespan ended (`time.monotonic()`), and the seconds it took."""
_ONE_STOP = 10.0
"""Seconds after a lifespan's flush within which a flush at exit is part of the same stop."""
_marks: list[Any] = []
"""Told in the SIGTERM handler that a stop began (each only sets a flag: `stop.mark`)."""
_ends: list[Any] = []
"""Called before a final flush, on its thread: end what still runs (`stop.end_running`)."""


def on_stop(mark: Any, end: Any) -> None:
    """`mark()` in the SIGTERM handler (a flag, nothing more); `end()` before the final flush."""
    if mark not in _marks:
        _marks.append(mark)
    if end not in _ends:
        _ends.append(end)


def install(providers: list[Any], deadline: float) -> None:
    """Flush `providers` within `deadline` seconds at exit, and on SIGTERM when nobody else handles it."""
    if not providers:
        return
    _made[:] = providers  # the global ones: a later configure() (tests) made the ones in use
    atexit.register(_at_exit, providers, deadline)
    if threading.current_thread() is not threading.main_thread():
        return  # Python allows signal handlers only from the main thread
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return  # the application (or a server such as uvicorn, which re-raises it) handles SIGTERM

    def on_sigterm(signum: int, frame: object) -> None:
        hold_sigterm(deadline)
        for mark in _marks:
            mark()
        # Nothing else here. When a flush at exit is already under way, this SIGTERM (a stdio
        # host's, 2 s after it closed stdin) changes nothing: that flush ends within its deadline.
        _start(providers, deadline, terminate=True)

    on_sigterm._mcpobs_stop = True  # type: ignore[attr-defined]
    signal.signal(signal.SIGTERM, on_sigterm)


def flush_before_stop(providers: list[Any], deadline: float) -> bool:
    """Export what every provider holds, without shutting any down; True if done in time.

    `providers` are the application's own (given to `instrument()`, or the global ones); with
    those `configure()` made, each is flushed once, in parallel, within `deadline` seconds.
    """
    global _lifespan_flush
    every: list[Any] = []
    for provider in [*_made, *providers]:
        if callable(getattr(provider, "force_flush", None)) and all(provider is not p for p in every):
            every.append(provider)
    if not every:
        return True
    began = time.monotonic()
    done = flush_within(every, deadline, _force_flush)
    ended = time.monotonic()
    _lifespan_flush = (ended, ended - began)
    return done


def _left_of_the_stop(deadline: float) -> float:
    """The deadline of a flush at exit: what a lifespan's flush just before it left of it.

    The flushes of one stop take at most one deadline together; time the application spends
    between them is its own.
    """
    last = _lifespan_flush
    if last is None or time.monotonic() - last[0] > _ONE_STOP:
        return deadline
    return max(0.0, deadline - last[1])


def flush_within(providers: list[Any], deadline: float, action: Any = None) -> bool:
    """Shut every provider down (or `action` each) in parallel; True if all finished within `deadline` seconds."""
    if deadline <= 0:
        return False  # the stop's deadline went to the lifespan's flush, which said what it left
    ends = time.monotonic() + deadline
    millis = max(int(deadline * 1000), 1)
    workers = [
        threading.Thread(target=action or _shutdown, args=(p, millis), name="mcpobs-flush", daemon=True)
        for p in providers
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


def _force_flush(provider: Any, millis: int) -> None:
    try:
        provider.force_flush(timeout_millis=millis)
    except Exception as exc:
        logger.debug("mcpobs: flush failed: %r", exc)


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
        try:
            _flushing.start()
        except RuntimeError:  # no thread can start now (`_at_exit` on Python 3.12.0 and 3.12.1)
            _flushing = None
            raise
    return _flushing


def _end_running() -> None:
    for end in _ends:
        try:
            end()
        except Exception as exc:
            logger.debug("mcpobs: ending the calls still running failed: %r", exc)


def _flush_then_terminate(providers: list[Any], deadline: float) -> None:
    _end_running()
    flush_within(providers, _left_of_the_stop(deadline))
    die_of_sigterm()


_flushed = threading.Event()
"""Set when the flush a SIGTERM began is over: the process may die now."""


def hold_sigterm(deadline: float) -> None:
    """In a first SIGTERM's handler (main thread): SIGTERMs that come while its flush runs wait for it.

    hypercorn's main process sends a worker two SIGTERMs 3 ms apart (`process.terminate()`, then
    multiprocessing's exit for its daemon children) and waits for it; supervisors that signal both
    a process and its group do the same. With the default action back at once, the second killed
    the worker before its flush began: its abandoned calls were lost. The flush is bounded by
    `deadline`: a SIGTERM after it, or after the deadline, kills at once, and SIGKILL always does.
    """
    _flushed.clear()
    began = time.monotonic()

    def again(signum: int, frame: object) -> None:
        if _flushed.is_set() or time.monotonic() - began > deadline + 1.0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

    again._mcpobs_stop = True  # type: ignore[attr-defined]
    signal.signal(signal.SIGTERM, again)


def die_of_sigterm() -> None:
    """The flush a SIGTERM began is over (on its thread): die of SIGTERM, as the process would have
    without mcpobs. Signal handlers are the main thread's to change: the held handler (`hold_sigterm`)
    puts the default action back there and raises SIGTERM again."""
    _flushed.set()
    os.kill(os.getpid(), signal.SIGTERM)


def _at_exit(providers: list[Any], deadline: float) -> None:
    _end_running()
    deadline = _left_of_the_stop(deadline)
    try:
        flushing = _start(providers, deadline, terminate=False) or _flushing
    except RuntimeError:
        # Python 3.12.0 and 3.12.1 start no thread once the interpreter is finalizing, and
        # `atexit` runs then (cpython#104690; 3.12.2 allows it again until the threads are joined).
        _flush_here(providers, deadline)
        return
    if flushing is not None:
        flushing.join(deadline + 0.5)  # the flush bounds itself; the margin covers its own bookkeeping


def _flush_here(providers: list[Any], deadline: float) -> None:
    """The flush at exit on the exiting thread, one provider after another, each given what is left.

    A flush, not a shutdown: the tracer provider's shutdown takes no timeout (its exporter's own,
    10 s by default, would bound it behind a silent collector), while `force_flush` stops at the
    time given; the process is ending, so nothing is left running that a shutdown would stop.
    """
    ends = time.monotonic() + deadline
    for provider in providers:
        left = ends - time.monotonic()
        if left <= 0:
            logger.warning(
                "mcpobs: telemetry was not flushed within %.1f s (%s not flushed); exiting without it. "
                "Check the collector, or set OTEL_PYTHON_MCP_SHUTDOWN_TIMEOUT (seconds).",
                deadline,
                type(provider).__name__,
            )
            return
        _force_flush(provider, max(int(left * 1000), 1))


def reset() -> None:
    """Forget a finished flush (tests that configure more than once in one process)."""
    global _flushing, _lifespan_flush
    with _state_lock:
        _flushing = None
        _lifespan_flush = None


def _after_fork_in_child() -> None:
    """A forked child has no flush under way (its threads did not survive the fork), and no lock held."""
    global _state_lock, _flushing, _lifespan_flush
    _state_lock = threading.Lock()
    _flushing = None
    _lifespan_flush = None


os.register_at_fork(after_in_child=_after_fork_in_child)
