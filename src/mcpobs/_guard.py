"""Keep telemetry bugs away from the call they observe.

Every piece of instrumentation logic runs inside `guarded`: an exception there is logged
(through `logging`, never stdout, which is the wire on stdio) and swallowed, and the
instrumented call goes on as if mcpobs were not there.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

logger = logging.getLogger("mcpobs")

_seen: set[str] = set()


def report(where: str, exc: BaseException) -> None:
    """Log an internal failure: with its traceback the first time per place, briefly after."""
    try:
        if where not in _seen:
            _seen.add(where)
            logger.warning("mcpobs: telemetry failed in %s; the call is unaffected", where, exc_info=exc)
        else:
            logger.debug("mcpobs: telemetry failed again in %s: %r", where, exc)
    except Exception:  # logging itself is broken: nothing more we can do
        pass


@contextmanager
def guarded(where: str) -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        report(where, exc)
