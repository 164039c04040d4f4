"""Connecting in `auto` mode: the `server/discover` probe, and the fallback to `initialize`.

A server of a revision before 2026-07-28 refuses the probe (-32601 over stdio; HTTP 400 over
Streamable HTTP, which the SDK reads as -32000) and the SDK falls back to `initialize`, as
designed. The refusal is how an older server says which era it speaks, not a failed request.
So while `negotiate_auto` runs, the probe's span is held (its end time kept). When the
connection settles, a refused probe ends `ok` with `mcpobs.session.fallback` if the fallback
succeeded, and keeps its own outcome if it did not. A probe never answered (the SDK gives up after
10 s and falls back all the same, say while a server's workers still boot) is no refusal: it stays
a timeout, with the fallback flag. The span that concluded the negotiation (`initialize`, or the
probe the client adopted) carries `mcpobs.session.negotiated_version`.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import Any

from mcpobs import semconv as S
from mcpobs._client.calls import ClientCall
from mcpobs._core.guard import guarded
from mcpobs._core.names import bounded_version
from mcpobs._core.outcome import Classification
from mcpobs.semconv import Outcome


class Negotiation:
    """One `negotiate_auto`: it claims the session's `server/discover` and `initialize` calls."""

    __slots__ = ("held", "session", "settled")

    def __init__(self, session: Any) -> None:
        self.session = session
        self.held: list[tuple[ClientCall, BaseException | None, int]] = []
        self.settled = False

    def annotate(self, call: ClientCall, result: Any, attrs: dict[str, Any]) -> None:
        # `negotiate_auto` sends `initialize` only when the probe could not settle the revision:
        # refused, or answered with nothing the client speaks (older revisions only, or `{}`).
        attrs[S.SESSION_FALLBACK] = True

    def claim(self, call: ClientCall, exc: BaseException | None) -> bool:
        """Keep a `server/discover` probe's span open until the negotiation settles."""
        if call.method != "server/discover" or self.settled:
            return False
        self.held.append((call, exc, time.time_ns()))
        return True

    def settle(self, connected: bool) -> None:
        """End the held probes, now that it is known whether the client fell back."""
        self.settled = True
        session = self.session
        fell_back = connected and getattr(session, "initialize_result", None) is not None
        for call, exc, end_time in self.held:
            cls = call.cls
            attrs: dict[str, Any] = {}
            with guarded("negotiation attributes"):
                if cls is not None and fell_back:
                    # answered with no revision the client speaks, refused, or never answered
                    attrs[S.SESSION_FALLBACK] = True
                    if cls.outcome is not Outcome.OK and cls.sample:
                        # the refusal said "older revision": keep its code, not the failure
                        cls = Classification(Outcome.OK, None, None, cls.rpc_code)
                        exc = None
                    # a probe the server never answered (the client's 10 s timeout) stays a timeout
                elif cls is not None and cls.outcome is Outcome.OK and connected:
                    attrs[S.SESSION_FALLBACK] = False
                    attrs[S.SESSION_NEGOTIATED_VERSION] = bounded_version(getattr(session, "protocol_version", None))
                if attrs and call.span.is_recording():
                    call.span.set_attributes(attrs)
            call.cls = cls
            call.holder = None
            call.end(exc, end_time)


_negotiation: ContextVar[Negotiation | None] = ContextVar("mcpobs_client_negotiation", default=None)


def holding(session: Any) -> Negotiation | None:
    """The negotiation of `session` running in this context, if any: it claims the handshake calls."""
    negotiation = _negotiation.get()
    return negotiation if negotiation is not None and negotiation.session is session else None


async def negotiate_auto(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """Wraps `negotiate_auto` (as `mcp.client.client` imported it): its probes are held, then settled."""
    session = args[0] if args else kwargs.get("session")
    negotiation = Negotiation(session)
    token = _negotiation.set(negotiation)
    try:
        result = await wrapped(*args, **kwargs)
    except BaseException:
        _negotiation.reset(token)
        negotiation.settle(connected=False)
        raise
    _negotiation.reset(token)
    negotiation.settle(connected=True)
    return result
