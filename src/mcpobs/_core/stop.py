"""A stop: export what is finished at once; end a call as `stopped` only when the server abandons it.

A drained shutdown loses nothing (`shutdown.py`, `_server/lifespan.py`), but some stops do not
drain: gunicorn's `--graceful-timeout` and granian's `--workers-kill-timeout` kill the workers,
an orchestrator SIGKILLs a container at the end of its grace period. A flush only at the end of
the lifespan comes after the calls in flight drain, so a worker killed first lost every span and
count of the calls it had already finished.

So a stop (`begin`, on a thread of its own) first exports what the providers hold: every call
already finished is out before the process waits for anything, and a kill can only take what
happened after that export. Then it waits. A call that finishes while the server drains is an
ordinary call: its outcome, its duration sample, its count. A call is `stopped`
(`error.type=server_stopped`, the server's failure, the outcome its client records for the
connection closing under it) only when the server abandons it:

- the server's own shutdown cancels its handler (uvicorn's `--timeout-graceful-shutdown`,
  hypercorn's `--graceful-timeout`, the lifespan's end; the middleware asks `stopping()`);
- it still runs at the process's last exit path: the end of uvicorn's drain before its worker
  re-raises SIGTERM (`finish`), interpreter exit and mcpobs's own SIGTERM flush (`shutdown.py`);
- it still runs a moment before a known kill (`kill_margin`): the deadline a server states
  (gunicorn's `--graceful-timeout` in its uvicorn worker, granian's `--workers-kill-timeout`:
  `stop_points.py` reads them) or the one the operator gives (`termination_grace`,
  `OTEL_PYTHON_MCP_TERMINATION_GRACE`: the orchestrator's, Kubernetes' `terminationGracePeriodSeconds`).

With no deadline known, no call is ended early: the process's exit decides.

A server call registers as it starts (`enter`) and is released as it ends (`release`):
whichever of the call and the stop takes it first ends it, the other does nothing. A dict's
`pop` decides, atomically, with no lock on a request's path.

`begin` is called from signal handlers: it takes no blocking lock and only starts a thread
(`shutdown.py` says why nothing more may run in a handler).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

from mcpobs._core import shutdown as _shutdown
from mcpobs._core.guard import logger, report

_grace: float | None = None
"""Seconds from a stop's beginning to the orchestrator's kill, as the operator said (`termination_grace`,
`OTEL_PYTHON_MCP_TERMINATION_GRACE`); None: not said."""
_killed_after: float | None = None
"""Seconds from a stop's beginning to the kill the server itself will make (`killed_after`)."""
_began = 0.0
"""When the stop began (`time.monotonic()`)."""

_running: dict[int, Callable[[], None]] = {}
"""id(call) -> what ends that call as `stopped` (its span, its count)."""
_marked = threading.Lock()
"""Held while a stop is under way: taken without blocking, so safe in a signal handler."""
_begun = threading.Lock()
"""Held once the stop's thread started (`begin`)."""
_thread: threading.Thread | None = None
_providers: Callable[[], list[Any]] = list
_deadline = 3.0


def use(providers: Callable[[], list[Any]], deadline: float, grace: float | None) -> None:
    """The providers a stop exports (the instrumentation's, read when the stop comes), the deadline
    of each export, and the seconds from a stop to the orchestrator's kill (None: not known)."""
    global _providers, _deadline, _grace
    _providers, _deadline, _grace = providers, deadline, grace


def killed_after(seconds: float | None) -> None:
    """The server kills this process `seconds` after its stop begins (its own grace setting)."""
    global _killed_after
    if seconds is not None and seconds > 0:
        _killed_after = float(seconds)


def kill_deadline() -> float | None:
    """Seconds from a stop's beginning to the first kill known (the server's or the orchestrator's)."""
    known = [d for d in (_grace, _killed_after) if d is not None]
    return min(known) if known else None


def kill_margin(deadline: float) -> float:
    """How long before a kill the calls still running are ended and exported: the export's time,
    a quarter of the deadline, at most 1 s (a call finishing inside it is recorded `stopped`)."""
    return min(1.0, deadline / 4)


def enter(call: object, end: Callable[[], None]) -> None:
    """`call` runs; `end` records it as `stopped` if a stop comes before it ends."""
    _running[id(call)] = end


def release(call: object) -> bool:
    """`call` ended: True when it is still the call's to record (no stop took it)."""
    return _running.pop(id(call), None) is not None


def stopping() -> bool:
    """Whether a stop has begun: a cancellation now is the server's, not the caller's."""
    return _marked.locked()


def mark() -> bool:
    """Say a stop began (from now on a cancellation is `stopped`); True the first time."""
    return _marked.acquire(blocking=False)


def unmark(marked: bool) -> None:
    """A server's own end (its lifespan's) marked the stop (`marked`, from `mark`) and is over.

    The process may serve again (a test harness, an app that restarts its server): the mark is
    taken back, unless a stop of the whole process (`begin`) came meanwhile.
    """
    if marked and not _begun.locked():
        _marked.release()


def begin() -> None:
    """Begin the stop (once; later calls do nothing): export now; before a known kill, end what still runs."""
    global _thread, _began
    mark()
    if not _begun.acquire(blocking=False):
        return
    _began = time.monotonic()
    _thread = threading.Thread(target=_run, name="mcpobs-stop", daemon=True)
    _thread.start()


def end_running() -> int:
    """End every call still running as `stopped`, now; how many there were."""
    ended = 0
    while True:
        try:
            _, end = _running.popitem()
        except KeyError:
            return ended
        try:
            end()
            ended += 1
        except Exception as exc:
            report("ending a stopped call", exc)


_late: threading.Thread | None = None
_again = False
"""A call was recorded since the late flush last began: it flushes once more."""
_late_lock = threading.Lock()


def flush_soon() -> None:
    """A call the server's stop cancelled is being recorded `stopped`, maybe after the stop's flushes
    ran (hypercorn may finish cancelling a request while the lifespan's flush exports): export
    again once it is recorded, on a thread the interpreter waits for (the export bounds itself).

    A call recorded while that export runs gets one more: a metric export takes the counts as they
    were when it began (before, such a count waited for a flush that might never come)."""
    global _late, _again
    with _late_lock:
        _again = True
        if _late is not None:
            return  # the running thread flushes again before it ends
        _late = threading.Thread(target=_flush_late, name="mcpobs-stop-late", daemon=False)
        _late.start()


def _flush_late() -> None:
    global _late, _again
    while True:
        time.sleep(0.05)  # the calls cancelled together are recorded by then: one export for them all
        with _late_lock:
            _again = False
        flush()
        with _late_lock:
            if not _again:
                _late = None
                return


def finish(timeout: float | None = None) -> None:
    """The server has drained and its process is about to end: wait for the stop's own steps (at
    most `timeout`, the export deadline by default), end what still runs, export what ended since."""
    thread = _thread
    limit = _deadline if timeout is None else timeout
    if thread is not None:
        thread.join(limit)
    end_running()
    flush()


def flush() -> bool:
    """Export what the providers hold now, within the deadline, without shutting them down."""
    try:
        return _shutdown.flush_before_stop(_providers(), _deadline)
    except Exception as exc:
        report("flush at the stop", exc)
        return False


def _run() -> None:
    try:
        flush()
        deadline = kill_deadline()
        if deadline is None:
            return  # no kill known: the calls in flight end as they end
        ends = _began + deadline - kill_margin(deadline)
        while _running and time.monotonic() < ends:
            time.sleep(0.02)
        ended = end_running()
        flush()
        if ended:
            logger.info(
                "mcpobs: %d call(s) still running just before the kill (%.1f s after the stop began); recorded as stopped",
                ended,
                deadline,
            )
    except Exception as exc:
        report("stop", exc)


def terminate(signum: int, frame: Any) -> None:
    """A SIGTERM handler for a process whose SIGTERM had its default action (a script, an agent host):
    end what still runs (the process will not wait for it) and export, on a thread, then die of
    SIGTERM as before. Only sets a flag and starts a thread here (`shutdown.py` says why)."""
    _shutdown.hold_sigterm(_deadline)  # a SIGTERM while it flushes waits for the flush
    mark()
    threading.Thread(target=_end_then_die, name="mcpobs-stop", daemon=True).start()


terminate._mcpobs_stop = True  # type: ignore[attr-defined]


def _end_then_die() -> None:
    try:
        end_running()
        flush()
    except Exception as exc:
        report("stop at SIGTERM", exc)
    _shutdown.die_of_sigterm()  # the process dies of SIGTERM, as before


def reset() -> None:
    """Forget a stop (tests that stop in one process more than once)."""
    global _marked, _begun, _thread, _killed_after, _late, _again, _late_lock
    _running.clear()
    _marked, _begun = threading.Lock(), threading.Lock()
    _thread = _late = None
    _again = False
    _late_lock = threading.Lock()
    _killed_after = None


_shutdown.on_stop(mark, end_running)
os.register_at_fork(after_in_child=reset)
"""A forked child runs none of its parent's calls and has no stop under way."""
