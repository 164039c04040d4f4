"""One HTTP request through the transport boundary, and the fate of the answer it carries.

The handler's return is not the answer: the SDK writes it after the middleware chain, and a
client gone by then never gets it (issue 50: a reply that could not be written is never `ok`).
The boundary (`transport.py`) keeps an `Exchange` per request it serves; the server middleware
asks it here, by context or by the request's ASGI scope, to settle the request's span once the
answer went out or could not.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextvars import ContextVar, Token
from typing import Any

from mcpobs._core.guard import guarded


class Exchange:
    """One HTTP request through the wrapper: what the response was, and who saw it."""

    __slots__ = ("answers", "body", "challenged", "ended", "left", "over", "reached", "settle", "status", "written")

    def __init__(self) -> None:
        self.status = 0
        self.body = b""
        self.reached: set[str] | None = None
        self.challenged = False
        """The response carried `WWW-Authenticate`: the auth middleware refused the caller."""
        self.written = False
        """The response's last body message went out, before the client left."""
        self.left = False
        """The app was told the client disconnected (`http.disconnect`)."""
        self.over = False
        """The app returned (or raised): no more of this response will be written."""
        self.ended = False
        """The response's last body message was sent (or is being sent)."""
        self.settle: Callable[[bool], None] | None = None
        """What ends the request this POST carried once its answer's fate is known (`after_reply`)."""
        self.answers: dict[str, Callable[[bool], None]] | None = None
        """An HTTP+SSE session's stream (mcp 1.x `sse_app`, `carries_answers`): what ends each request
        whose answer is still to be written on it, by JSON-RPC id (its text in the event, unquoted)."""


current: ContextVar[Exchange | None] = ContextVar("mcpobs_http_exchange", default=None)
REPLY_EVENT = re.compile(rb'data: \{"jsonrpc":"2\.0","id":"?((?<=")(?:[^"\\]|\\.)*(?=")|-?\d+)"?,"(?:result|error)"')
"""An event-stream chunk carrying a JSON-RPC answer (the SDKs write `jsonrpc`, `id`, then `result` or
`error`; a request to the client has `method` there): on a session's stream the answer is an event
and the stream closes after it, so the answer, not the close, is what was written."""
by_scope: dict[int, Exchange] = {}
"""id(ASGI scope) -> the exchange serving it, while it does (the scope lives as long)."""


def mark_reached(method: str) -> None:
    """Called by the server middleware: this HTTP request's `method` reached a handler chain."""
    exchange = current.get()
    if exchange is not None:
        if exchange.reached is None:
            exchange.reached = set()
        exchange.reached.add(method)


def after_reply(settle: Callable[[bool], None], request: Any = None, request_id: object = None) -> bool:
    """Called by the server middleware when a request's handler returned: `settle(written)` runs once
    this HTTP request's response is over, `written` whether its last byte went out before the client
    left. False when no boundary watches a response still to come (the caller settles at once).

    The handler's return is not the answer: the SDK writes it after the middleware chain (the
    2026-07-28 entry after `serve_one`, the session transport from the dispatcher's write), and a
    client gone by then never gets it. One POST carries one request (batches are refused).

    `request`: the Starlette request of the POST that carried it, which finds its exchange where
    the handler does not run in the POST's context (mcp 1.x's sessions run in a task of their own).
    On HTTP+SSE (mcp 1.x `sse_app`) a 202 answered that POST and the answer goes on the session's
    stream, the GET whose context the session's task runs in (`carries_answers`): there it waits for
    the event answering `request_id`.
    """
    scope = getattr(request, "scope", None)
    # Never the context's exchange when the request names its own: a 1.x session's task runs in the
    # context of the request that opened it (an HTTP+SSE session's GET stream, open all along).
    exchange = by_scope.get(id(scope)) if scope is not None else current.get()
    stream = current.get() if exchange is None or exchange.ended else None
    if stream is not None and stream.answers is not None and request_id is not None:
        if stream.over:  # its end settled what it held (it cancels the session's handlers too)
            return False
        stream.answers[str(request_id)] = settle  # a client gone already: settled unwritten at its end
        return True
    if exchange is None or exchange.over or exchange.ended or exchange.settle is not None:
        return False
    exchange.settle = settle
    return True


def carries_answers() -> None:
    """This context's request is an HTTP+SSE session's stream: the answers to its POSTs go on it."""
    exchange = current.get()
    if exchange is not None and exchange.answers is None:
        exchange.answers = {}


def answer_in(exchange: Exchange, body: bytes) -> Callable[[bool], None] | None:
    """What ends the request whose answer this chunk of `exchange`'s event stream carries (taken)."""
    found = REPLY_EVENT.search(body, 0, 512)
    if found is None or not exchange.answers:
        return None
    return exchange.answers.pop(found.group(1).decode(errors="replace"), None)


def settle(exchange: Exchange) -> None:
    """The answer's fate is known: end the request it answers (once). A stream's answers still to be
    written when it is over never were."""
    settle = exchange.settle
    if settle is not None:
        exchange.settle = None
        settled(settle, exchange.written)
    if exchange.over and exchange.answers:
        while exchange.answers:
            settled(exchange.answers.popitem()[1], False)


def settled(settle: Callable[[bool], None], written: bool) -> None:
    """Run one request's `settle`; an error in it is mcpobs's, contained here."""
    with guarded("server reply"):
        settle(written)


def watching() -> bool:
    """Whether a boundary already watches the HTTP request this context serves."""
    return current.get() is not None


def enter(scope: Any, exchange: Exchange) -> Token[Exchange | None]:
    """The boundary starts serving `scope` with `exchange`: found by context and by scope."""
    by_scope[id(scope)] = exchange
    return current.set(exchange)


def leave(scope: Any, token: Token[Exchange | None]) -> None:
    current.reset(token)
    by_scope.pop(id(scope), None)
