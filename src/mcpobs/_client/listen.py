"""`Client.listen` bypasses `send_request`: one CLIENT span from the request until the stream closes."""

from __future__ import annotations

from typing import Any

from mcpobs._client import calls
from mcpobs._client.calls import ClientCall, Outbound
from mcpobs._client.spans import ClientSpans
from mcpobs._core import outcome as _outcome


class ListenStream:
    """`client.listen(...)` with its span.

    The span is current while the request is sent (so the server's `subscriptions/listen`
    span is its child) but not inside the `async with` body, which is the host's own code.
    """

    def __init__(self, spans: ClientSpans, session: Any, stream: Any) -> None:
        self._spans = spans
        self._session = session
        self._stream = stream
        self._call: ClientCall | None = None

    async def __aenter__(self) -> Any:
        # Opened here, not when the stream object is made: one never entered sends nothing.
        self._call = call = self._spans.try_open(
            self._session, "subscriptions/listen", None, Outbound("subscriptions/listen")
        )
        if call is None:
            return await self._stream.__aenter__()
        tokens = calls.enter(call)
        try:
            subscription = await self._stream.__aenter__()
        except BaseException as exc:
            calls.leave(tokens)
            call.failed(exc)
            call.end(exc)
            raise
        calls.leave(tokens)
        return subscription

    async def __aexit__(self, *exc_info: Any) -> Any:
        error: BaseException | None = None
        try:
            return await self._stream.__aexit__(*exc_info)
        except BaseException as exc:
            error = exc
            raise
        finally:
            if self._call is not None:
                self._close(error or exc_info[1])

    def _close(self, exc: BaseException | None) -> None:
        from mcp.client.subscriptions import SubscriptionLost
        from mcp.shared.exceptions import MCPError

        # The stream's own failures count; an exception from the host's code in the body does not.
        if exc is not None and not isinstance(exc, MCPError | SubscriptionLost) and not _outcome.is_cancellation(exc):
            exc = None
        call = self._call
        assert call is not None
        if exc is not None:
            call.failed(exc)
        else:
            call.replied(None)
        call.end(exc)
