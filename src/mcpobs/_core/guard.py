"""Keep telemetry bugs away from the call they observe.

Every piece of instrumentation logic runs inside `guarded` (or, on the per-request path,
a plain `try` that hands the exception to `report`): an exception there is logged (through
`logging`, never stdout, which is the wire on stdio) and swallowed, and the instrumented
call goes on as if mcpobs were not there.
"""

from __future__ import annotations

import logging
from types import TracebackType

logger = logging.getLogger("mcpobs")

_seen: set[str] = set()


def report(where: str, exc: BaseException) -> None:
    """Log an internal failure: with its traceback the first time per place, briefly after.

    The traceback is its frames and exception classes (`frames.frames_only`), never a message:
    what failed may have been handling a caller's value, and an exception's message (a
    `KeyError`'s key, a user hook's own words) can be that value.
    """
    try:
        if where not in _seen:
            _seen.add(where)
            from mcpobs._core.frames import frames_only

            logger.warning(
                "mcpobs: telemetry failed in %s (%s); the call is unaffected.\n%s",
                where,
                type(exc).__qualname__,
                frames_only(exc).rstrip(),
            )
        else:
            logger.debug("mcpobs: telemetry failed again in %s (%s)", where, type(exc).__qualname__)
    except Exception:  # logging itself is broken: nothing more we can do
        pass


class guarded:  # lower case: it reads like the function it replaced, `with guarded("where"):`
    """A context manager that reports and swallows an `Exception` raised in its body.

    A class rather than a generator: it runs several times on every request, and a
    generator-based context manager costs several times as much to enter and leave.
    """

    __slots__ = ("where",)

    def __init__(self, where: str) -> None:
        self.where = where

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> bool:
        if isinstance(exc, Exception):
            report(self.where, exc)
            return True
        return False
