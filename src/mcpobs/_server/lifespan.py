"""The end of a Streamable HTTP app's lifespan: the flush every HTTP server reaches before its process ends.

A worker of `uvicorn --workers N`, and gunicorn's uvicorn worker, own SIGTERM: when they have
stopped they put its default action back and raise it again, so the process dies of the
signal, with no `atexit` and no handler of mcpobs's (one installed before gunicorn forked is
reset in the worker). What each of them does first is end the app's lifespan and wait for it.
The lifespan of every app the SDK builds (`streamable_http_app()`, FastMCP's) is the session
manager's `run()`, and an application that mounts the MCP app in its own enters `run()` in
its own lifespan: when `run()` ends, the providers are flushed (`shutdown.flush_before_stop`:
exported, not shut down, within the shutdown deadline) on a worker thread, while the server
waits for the lifespan to finish.

While `run()` ends, the stop is marked (`_core/stop.py`): the calls it cancels then (hypercorn's
`--graceful-timeout` over, uvicorn's `--timeout-graceful-shutdown`) are `stopped`, the server's
doing, not `cancelled`. The mark is taken back after, unless a SIGTERM's stop began meanwhile.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread

from mcpobs._core import inventory as I
from mcpobs._core import shutdown as _shutdown
from mcpobs._core import stop as _stop
from mcpobs._core.autoconfig import shutdown_timeout_from
from mcpobs._core.guard import report
from mcpobs._core.patches import Patch
from mcpobs._core.telemetry import Telemetry


def patches(telemetry: Telemetry) -> list[Patch]:
    def run(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        return _flushing_at_the_end(wrapped(*args, **kwargs), telemetry)

    return [Patch.of(I.LIFESPAN_END, run)]


@asynccontextmanager
async def _flushing_at_the_end(running: AbstractAsyncContextManager[Any], telemetry: Telemetry) -> AsyncGenerator[None]:
    marked = False
    try:
        async with running:
            try:
                yield
            finally:
                marked = _stop.mark()  # what the run cancels as it ends is the server's stop, not its callers'
    finally:
        _stop.unmark(marked)
        await flush(telemetry)


async def flush(telemetry: Telemetry) -> None:
    """Export what `telemetry`'s providers (and those mcpobs configured) hold; never raises."""
    try:
        deadline = telemetry.settings.shutdown_timeout
        if deadline is None:
            deadline = shutdown_timeout_from(os.environ)
        with anyio.CancelScope(shield=True):  # a lifespan ended by cancellation still flushes
            await anyio.to_thread.run_sync(_shutdown.flush_before_stop, telemetry.providers(), deadline)
    except Exception as exc:
        report("flush at the end of the lifespan", exc)
