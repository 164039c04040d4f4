"""A traceback without what anyone wrote: the frames (code) and each exception's class.

The message line of a traceback ("ValueError: card 4111… declined") and its notes are
whatever the code put there, often a caller's value; the frames say where it failed. Used for
the `exception` event mcpobs records by default (`privacy`) and for the traceback of a
failure inside mcpobs that its log shows (`guard.report`).
"""

from __future__ import annotations

import traceback

_CAUSE = "\nThe above exception was the direct cause of the following exception:\n\n"
_CONTEXT = "\nDuring handling of the above exception, another exception occurred:\n\n"


def frames_only(exc: BaseException) -> str:
    """A traceback as Python prints it, with every exception's message and notes left out.

    The frames (file, line, function, the source line) are code and say where it failed; the
    message line after them ("ValueError: card 4111… declined") is whatever the code put there.
    Chained causes are kept the same way (their messages are text too).
    """
    chain: list[tuple[BaseException, str]] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    link = ""
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append((current, link))
        if current.__cause__ is not None:
            current, link = current.__cause__, _CAUSE
        elif current.__context__ is not None and not current.__suppress_context__:
            current, link = current.__context__, _CONTEXT
        else:
            current = None
    parts: list[str] = []
    for index, (one, _) in enumerate(reversed(chain)):
        if index:
            parts.append(chain[len(chain) - index][1])
        if one.__traceback__ is not None:
            parts.append("Traceback (most recent call last):\n")
            parts.extend(traceback.format_list(traceback.extract_tb(one.__traceback__)))
        kind = type(one)
        module = kind.__module__
        parts.append(
            f"{kind.__qualname__ if module in ('builtins', '__main__') else f'{module}.{kind.__qualname__}'}\n"
        )
    return "".join(parts)
