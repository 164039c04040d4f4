"""Multi-round-trip operations (SEP-2322) on the client: the rounds nest under one anchor span.

`Client.call_tool` / `get_prompt` / `read_resource` may take several rounds. The first round
that comes back `input_required` becomes the anchor: its span stays open until the
operation ends and takes the final outcome; the inputs the client supplies and the later
rounds nest under it, so a slow human answer shows as such.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from opentelemetry.context import Context

from mcpobs import semconv as S
from mcpobs.semconv import Outcome

if TYPE_CHECKING:
    from mcpobs._client.calls import ClientCall
    from mcpobs._core.outcome import Classification


class Operation:
    """One `Client.call_tool` / `get_prompt` / `read_resource`, which may take several rounds."""

    __slots__ = ("anchor", "last", "method", "rounds", "session")

    def __init__(self, method: str, session: Any) -> None:
        self.method = method
        self.session = session
        self.anchor: ClientCall | None = None
        self.rounds = 1
        self.last: Classification | None = None


_operation: ContextVar[Operation | None] = ContextVar("mcpobs_client_operation", default=None)


active = _operation.get
"""The operation in this context, if any: the cheap check before `next_round`."""


def start(op: Operation) -> object:
    return _operation.set(op)


def stop(token: Any) -> None:
    _operation.reset(token)


def next_round(session: Any, method: str, attrs: dict[str, Any]) -> tuple[Operation | None, Context | None]:
    """The operation a request opening now belongs to, and its parent when it is a later round."""
    op = _operation.get()
    if op is None:
        return None, None
    if op.method != method or op.session is not session:
        return None, None  # e.g. the tools/list the output validation issues: not a round
    if op.anchor is None:
        return op, None
    op.rounds += 1
    attrs[S.MRTR_ROUND] = op.rounds
    return op, op.anchor.context


def anchor_parent() -> Context | None:
    """The anchor's context, when an operation in this context has one (for the client's answers)."""
    op = _operation.get()
    if op is None or op.anchor is None:
        return None
    return op.anchor.context


def become_anchor(call: ClientCall, cls: Classification) -> bool:
    """Note a round's outcome on its operation; True when this round became the anchor."""
    op = call.op
    assert op is not None
    op.last = cls
    if op.anchor is not None:
        op.anchor.description = call.description  # the anchor ends with the last round's outcome
    if op.anchor is None and cls.outcome is Outcome.PENDING_INPUT:
        op.anchor = call
        if call.span.is_recording():
            call.span.set_attributes({S.MRTR_ROUND: 1, S.OUTCOME: cls.outcome.value})
        return True
    return False
