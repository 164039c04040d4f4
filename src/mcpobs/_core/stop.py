"""The stop that does not wait: export what is finished at once, then end what still runs as `stopped`.

A drained shutdown loses nothing (`shutdown.py`, `_server/lifespan.py`), but many stops do not
drain: gunicorn's `--graceful-timeout`, granian's `--workers-kill-timeout`, a SIGKILL after a
container's grace period, uvicorn cancelling what outlives `--timeout-graceful-shutdown`, a
stdio host that closes stdin and SIGTERMs 2 s later. A flush only at the end of the lifespan
comes after the calls in flight drain, so a worker killed first lost every span and count of
the calls it had already finished; and a call the server aborted looked like the caller
giving up (`cancelled`), while its client recorded a server error.

So a stop has two steps, on a thread of its own (`begin`):

1. at once, export what the providers hold: every call already finished is out before the
   process waits for anything;
2. once nothing runs, or after the grace (`OTEL_PYTHON_MCP_STOP_GRACE`, 1 s), end every call
   still running with the `stopped` outcome (`error.type=server_stopped`, a server-side failure,
   the same outcome its client records for the connection closing under it), count it, and
   export again.

Whatever a SIGKILL then takes is only what happened after the last export. `finish` exports once
more when the server has drained (what ended in the meantime).

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

_grace = 1.0
"""Seconds a stop lets the calls in flight finish before it ends them as `stopped`
(`OTEL_PYTHON_MCP_STOP_GRACE`, 1 s by default: inside gunicorn's shortest useful
`--graceful-timeout`, 2 s, and a SIGKILL 1.5 s after SIGTERM)."""

_running: dict[int, Callable[[], None]] = {}
"""id(call) -> what ends that call as `stopped` (its span, its count)."""
_marked = threading.Lock()
"""Held while a stop is under way: taken without blocking, so safe in a signal handler."""
_begun = threading.Lock()
"""Held once the stop's thread started (`begin`)."""
_thread: threading.Thread | None = None
_providers: Callable[[], list[Any]] = list
_deadline = 3.0


def use(providers: Callable[[], list[Any]], deadline: float, grace: float) -> None:
    """The providers a stop exports (the instrumentation's, read when the stop comes), the deadline
    of each export, and the grace the calls in flight get."""
    global _providers, _deadline, _grace
    _providers, _deadline, _grace = providers, deadline, grace


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
    """Begin the stop (once; later calls do nothing): export now, end what still runs after the grace."""
    global _thread
    mark()
    if not _begun.acquire(blocking=False):
        return
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


def finish(timeout: float | None = None) -> None:
    """The server has drained: wait for the stop's own steps, then export what ended since."""
    thread = _thread
    limit = _deadline if timeout is None else timeout
    if thread is not None:
        thread.join(limit)
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
        ends = time.monotonic() + _grace
        while _running and time.monotonic() < ends:
            time.sleep(0.02)
        ended = end_running()
        flush()
        if ended:
            logger.info("mcpobs: the server stopped %d call(s) still running; recorded as stopped", ended)
    except Exception as exc:
        report("stop", exc)


def reset() -> None:
    """Forget a stop (tests that stop in one process more than once)."""
    global _marked, _begun, _thread
    _running.clear()
    _marked, _begun = threading.Lock(), threading.Lock()
    _thread = None


_shutdown.on_stop(mark, end_running)
os.register_at_fork(after_in_child=reset)
"""A forked child runs none of its parent's calls and has no stop under way."""
