"""Multi-round-trip operations (SEP-2322) on the client: the rounds nest under one anchor span.

`Client.call_tool` / `get_prompt` / `read_resource` may take several rounds. Each round's
call is claimed by the operation; the first round that comes back `input_required` becomes
the anchor: its span stays open until the operation ends and takes the final outcome; the
inputs the client supplies and the later rounds nest under it, so a slow human answer shows
as such.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from opentelemetry.context import Context

from mcpobs import semconv as S
from mcpobs._client import classify
from mcpobs._client.calls import ClientCall
from mcpobs._core import outcome as _outcome
from mcpobs._core.guard import report
from mcpobs._core.outcome import Classification
from mcpobs._core.telemetry import end_once
from mcpobs.semconv import Outcome


class Operation:
    """One `Client.call_tool` / `get_prompt` / `read_resource`, which may take several rounds."""

    __slots__ = ("anchor", "client", "last", "method", "rounds")

    def __init__(self, method: str, client: Any) -> None:
        self.method = method
        self.client = client
        """The `Client`: its session is looked up only once a round comes back pending (most never do)."""
        self.anchor: ClientCall | None = None
        self.rounds = 1
        self.last: Classification | None = None

    def owns(self, session: Any, method: str) -> bool:
        """A request of this operation's method on its client's session: a round (not, say, the
        tools/list the output validation issues, or a call an input callback makes elsewhere)."""
        return method == self.method and session is _session_of(self.client)

    def annotate(self, call: ClientCall, result: Any, attrs: dict[str, Any]) -> None:
        return None  # a round's reply adds nothing of the operation's

    def claim(self, call: ClientCall, exc: BaseException | None) -> bool:
        """A request in the operation ends: note a round's outcome; True when it became the anchor (kept open).

        Every request opened before the anchor is claimed by the operation unchecked (`spans.open`):
        whether it is a round is asked here, only of one that came back pending.
        """
        cls = call.cls
        assert cls is not None
        anchor = self.anchor
        if anchor is None and cls.outcome is not Outcome.PENDING_INPUT:
            return False  # one round, answered: an ordinary call
        if not self.owns(call.session, call.method):
            return False
        self.last = cls
        if anchor is not None:
            anchor.description = call.description  # the anchor ends with the last round's outcome
            return False
        self.anchor = call
        if call.span.is_recording():
            call.span.set_attributes({S.MRTR_ROUND: 1, S.OUTCOME: cls.outcome.value})
        try:  # a metric pipeline that raises must not end the anchor early
            call.count(cls)
        except Exception as err:
            report("client metrics", err)
        return True

    def end(self, exc: BaseException | None) -> None:
        """The operation is over: its anchor takes the final outcome and ends."""
        anchor = self.anchor
        if anchor is None:
            return
        cls = self.last
        if exc is not None and (cls is None or cls.outcome is Outcome.PENDING_INPUT):
            cls = classify.from_exception(exc)  # e.g. an input the host refused, or rounds exhausted
            anchor.description = anchor.recorder.telemetry.privacy.description(exc)
        try:
            anchor.end_as(cls or _outcome.OK, exc)
        except Exception as err:
            report("client operation end", err)
            end_once(anchor.span)


_operation: ContextVar[Operation | None] = ContextVar("mcpobs_client_operation", default=None)


active = _operation.get
"""The operation in this context, if any: the cheap check before `next_round`."""


start = _operation.set
"""Make `op` the operation of this context (the variable's own `set`: no extra call)."""

stop = _operation.reset
"""End what `start` began, with its token."""


def next_round(
    op: Operation, anchor: ClientCall, session: Any, method: str, attrs: dict[str, Any]
) -> tuple[Operation | None, Context | None]:
    """`op`, and the parent, of a request opening after its anchor when it is a later round."""
    if not op.owns(session, method):
        return None, None
    op.rounds += 1
    attrs[S.MRTR_ROUND] = op.rounds
    return op, anchor.context


def _session_of(client: Any) -> Any:
    try:
        return client.session
    except Exception:  # not entered: the call itself will say so
        return None


def anchor_parent() -> Context | None:
    """The anchor's context, when an operation in this context has one (for the client's answers)."""
    op = _operation.get()
    if op is None or op.anchor is None:
        return None
    return op.anchor.context
