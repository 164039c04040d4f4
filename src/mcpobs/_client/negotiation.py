"""Connecting in `auto` mode: the `server/discover` probe, and the fallback to `initialize`.

A server of a revision before 2026-07-28 refuses the probe (-32601 over stdio; HTTP 400 over
Streamable HTTP, which the SDK reads as -32000) and the SDK falls back to `initialize`, as
designed. The refusal is how an older server says which era it speaks, not a failed request.
So while `negotiate_auto` runs, the probe's span is held (its end time kept). When the
connection settles, a refused probe ends `ok` with `mcpobs.session.fallback` if the fallback
succeeded, and keeps its own outcome if it did not; the span that concluded the negotiation
(`initialize`, or the probe the client adopted) carries `mcpobs.session.negotiated_version`.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from mcpobs import semconv as S
from mcpobs._core.guard import guarded
from mcpobs._core.names import bounded_version
from mcpobs._core.outcome import Classification
from mcpobs.semconv import Outcome

if TYPE_CHECKING:
    from mcpobs._client.calls import ClientCall
    from mcpobs._client.spans import ClientSpans


class _Negotiation:
    __slots__ = ("held", "refused", "session")

    def __init__(self, session: Any) -> None:
        self.session = session
        self.held: list[tuple[ClientCall, BaseException | None, int]] = []
        self.refused = False


_negotiation: ContextVar[_Negotiation | None] = ContextVar("mcpobs_client_negotiation", default=None)


def _for(session: Any) -> _Negotiation | None:
    negotiation = _negotiation.get()
    return negotiation if negotiation is not None and negotiation.session is session else None


def hold(call: ClientCall, exc: BaseException | None) -> bool:
    """Keep a `server/discover` probe's span open until the negotiation settles; True when it was held."""
    negotiation = _for(call.session)
    if negotiation is None:
        return False
    negotiation.held.append((call, exc, time.time_ns()))
    if call.cls is not None and call.cls.outcome is not Outcome.OK:
        negotiation.refused = True
    return True


def handshake_attributes(call: ClientCall, result: Any) -> dict[str, Any]:
    """What a successful `initialize` tells: the revision settled on and, in `auto` mode, the fallback."""
    attrs: dict[str, Any] = {S.SESSION_NEGOTIATED_VERSION: bounded_version(getattr(result, "protocol_version", None))}
    negotiation = _for(call.session)
    if negotiation is not None:
        attrs[S.SESSION_FALLBACK] = negotiation.refused
    return attrs


class Negotiator:
    """Wraps `negotiate_auto` (as `mcp.client.client` imported it): holds and then settles the probes."""

    def __init__(self, spans: ClientSpans) -> None:
        self.spans = spans

    async def negotiate_auto(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        session = args[0] if args else kwargs.get("session")
        negotiation = _Negotiation(session)
        token = _negotiation.set(negotiation)
        try:
            result = await wrapped(*args, **kwargs)
        except BaseException:
            _negotiation.reset(token)
            self._settle(negotiation, connected=False)
            raise
        _negotiation.reset(token)
        self._settle(negotiation, connected=True)
        return result

    def _settle(self, negotiation: _Negotiation, connected: bool) -> None:
        session = negotiation.session
        fell_back = connected and getattr(session, "initialize_result", None) is not None
        for call, exc, end_time in negotiation.held:
            cls = call.cls
            attrs: dict[str, Any] = {}
            with guarded("negotiation attributes"):
                if cls is not None and cls.outcome is not Outcome.OK and fell_back:
                    # the refusal said "older revision": keep its code, not the failure
                    cls = Classification(Outcome.OK, None, None, cls.rpc_code)
                    exc = None
                    attrs[S.SESSION_FALLBACK] = True
                elif cls is not None and cls.outcome is Outcome.OK and connected and not fell_back:
                    attrs[S.SESSION_FALLBACK] = False
                    attrs[S.SESSION_NEGOTIATED_VERSION] = bounded_version(getattr(session, "protocol_version", None))
                if attrs and call.span.is_recording():
                    call.span.set_attributes(attrs)
            call.cls = cls
            self.spans.finish(call, exc, end_time=end_time, held=True)
