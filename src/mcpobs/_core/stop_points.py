"""Where a stop begins in a process that an ASGI server owns, MCP server or not (`stop.py`).

uvicorn (and its `--workers`, and gunicorn's `uvicorn_worker.UvicornWorker`, which runs uvicorn's
`Server`) takes SIGTERM in `Server.handle_exit`, drains in `Server.shutdown`, then puts the
default action back and raises SIGTERM again: the process dies with no `atexit`. Its handler is
where the stop begins (`stop.begin`: export now), before uvicorn waits for anything; the end of
`shutdown` is the worker's last exit path: what still runs there is `stopped`, and what ended
while it drained is exported. gunicorn SIGKILLs its worker `--graceful-timeout` after SIGTERM:
its uvicorn worker reads that deadline as it starts serving (`stop.killed_after`).
The same points serve a web app whose only MCP part is a `Client`: it has no MCP lifespan to
flush at.

A granian worker takes SIGTERM on its event loop (`granian._signals.set_loop_signals`: the
loop's `add_signal_handler`, whose Python-level handler only wakes the loop); the stop begins
in a handler chained in front of that one.
Its main process kills a worker that outlives `--workers-kill-timeout`, read from the command line
(or `GRANIAN_WORKERS_KILL_TIMEOUT`) the forked worker shares; one that stops in time exits normally,
through `atexit` (`shutdown.py`).

A hypercorn worker gets no signal: its main process takes SIGTERM and sets an event the worker
polls (`check_multiprocess_shutdown_event`); the stop begins when that poll returns. Its
`--graceful-timeout` ends in hypercorn cancelling the calls (`stopped`, the middleware asks the
stop), not a kill. On Python 3.12+ hypercorn waits for every open connection before that grace
applies (pgjones/hypercorn#308): the orchestrator's SIGKILL ends it, known only from `termination_grace`.

uvicorn installs its handler (a bound method) before it imports the app, so before
`instrument()`: `rebind` points the handler already installed at the wrapped method.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Awaitable
from typing import Any

import anyio.to_thread

from mcpobs._core import inventory as I
from mcpobs._core import stop as _stop
from mcpobs._core.guard import guarded
from mcpobs._core.patches import Patch


def patches() -> list[Patch]:
    def handle_exit(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        with guarded("stop at SIGTERM"):
            _stop.begin()  # in a signal handler: this only starts a thread
        return wrapped(*args, **kwargs)

    def shutdown(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        return _then_export(wrapped(*args, **kwargs))

    def loop_signals(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        event = wrapped(*args, **kwargs)
        with guarded("granian's stop"):
            chain_in_front(signal.SIGTERM, signal.SIGINT)
            _stop.killed_after(granian_kill_timeout())
        return event

    def worker_told_to_stop(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        return _then_begin(wrapped(*args, **kwargs))

    def gunicorn_worker(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        with guarded("gunicorn's kill deadline"):
            settings = getattr(instance.cfg, I.GUNICORN_SETTINGS.attribute)
            _stop.killed_after(settings["graceful_timeout"].get())
        return wrapped(*args, **kwargs)

    return [
        Patch.of(I.UVICORN_EXIT, handle_exit),
        Patch.of(I.UVICORN_SHUTDOWN, shutdown),
        Patch.of(I.GRANIAN_WORKER_SIGNALS, loop_signals),
        Patch.of(I.HYPERCORN_WORKER_STOP, worker_told_to_stop),
        Patch.of(I.GUNICORN_UVICORN_WORKER, gunicorn_worker),
    ]


_GRANIAN_KILL = "--workers-kill-timeout"
_GRANIAN_KILL_ENV = "GRANIAN_WORKERS_KILL_TIMEOUT"


def granian_kill_timeout(argv: list[str] | None = None, env: Any = None) -> float | None:
    """granian's `--workers-kill-timeout` (seconds, or granian's durations: `30s`, `1m`), from the
    command line the worker shares with its main process, else its variable; None when not set."""
    argv = sys.argv if argv is None else argv
    env = os.environ if env is None else env
    raw: str | None = env.get(_GRANIAN_KILL_ENV)
    for i, arg in enumerate(argv):
        if arg == _GRANIAN_KILL and i + 1 < len(argv):
            raw = argv[i + 1]
        elif arg.startswith(_GRANIAN_KILL + "="):
            raw = arg.partition("=")[2]
    if not raw:
        return None
    duration = I.resolve(I.GRANIAN_DURATION)
    if duration is None:
        return None
    owner, name = duration
    return float(getattr(owner, name)(1, 1800).convert(raw, None, None))


async def _then_begin(told: Awaitable[Any]) -> Any:
    result = await told  # returns once the worker is told to stop; a cancellation passes through
    with guarded("hypercorn's stop"):
        _stop.begin()
    return result


async def _then_export(shutting: Awaitable[Any]) -> Any:
    try:
        return await shutting
    finally:
        if _stop.stopping():  # a signal's stop: a server shut down by code keeps its process
            with guarded("export after the drain"), anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(_stop.finish)


def chain_in_front(*signals: int) -> None:
    """Begin the stop in front of the Python handler each of `signals` has (an event loop's, which
    only wakes the loop: the loop's own handler then runs as before)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in signals:
        previous = signal.getsignal(sig)
        if not callable(previous) or getattr(previous, "_mcpobs_stop", False):
            continue

        def begin_then(signum: int, frame: Any, previous: Any = previous) -> None:
            _stop.begin()  # in a signal handler: this only starts a thread
            previous(signum, frame)

        begin_then._mcpobs_stop = True  # type: ignore[attr-defined]
        signal.signal(sig, begin_then)


def host_sigterm() -> Any:
    """A process whose SIGTERM nobody else handles (a script, an agent host) exports what it finished
    and its interrupted calls as `stopped` before it dies of SIGTERM (`stop.terminate`); a handler
    the host installed runs as before, the stop begun in front of it. Returns the undo step."""
    if threading.current_thread() is not threading.main_thread():
        return None  # Python sets signal handlers only from the main thread
    current = signal.getsignal(signal.SIGTERM)
    if getattr(current, "_mcpobs_stop", False) or _uvicorns(current):
        return None  # mcpobs's own already (shutdown.py's, or this one), or uvicorn's, wrapped
    if current is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _stop.terminate)
    elif callable(current):
        chain_in_front(signal.SIGTERM)
    else:
        return None  # ignored: the host chose that

    def undo() -> None:
        if getattr(signal.getsignal(signal.SIGTERM), "_mcpobs_stop", False):
            signal.signal(signal.SIGTERM, current)

    return undo


def _uvicorns(handler: Any) -> bool:
    server = sys.modules.get("uvicorn.server")
    owner: Any = getattr(handler, "__self__", None)
    return server is not None and isinstance(owner, server.Server)


def rebind() -> None:
    """Point the SIGTERM and SIGINT handlers a running uvicorn `Server` installed at the wrapped method."""
    server = sys.modules.get("uvicorn.server")
    if server is None or threading.current_thread() is not threading.main_thread():
        return  # Python sets signal handlers only from the main thread
    with guarded("uvicorn's signal handlers"):
        for sig in (signal.SIGTERM, signal.SIGINT):
            handler = signal.getsignal(sig)
            owner: Any = getattr(handler, "__self__", None)
            if isinstance(owner, server.Server) and getattr(handler, "__name__", None) == "handle_exit":
                signal.signal(sig, owner.handle_exit)  # now through the wrapper
