"""mcp 1.x: the reason a peer gave when it cancelled a request, for that request's span.

A peer's `notifications/cancelled` cancels the request's responder (`RequestResponder.cancel`),
which answers at once; the reason is read where the session parses the notification
(`ClientNotification.model_validate`), kept for the responder the `cancel` that follows names, and
read when the request's span ends cancelled (`dispatch.ServerObserver`).
"""

from __future__ import annotations

import weakref
from contextvars import ContextVar
from typing import Any

from mcpobs import semconv as S
from mcpobs._core import inventory as I
from mcpobs._core.guard import guarded
from mcpobs._core.patches import Patch
from mcpobs._core.text import clean

_reasons: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
"""A cancelled request's responder -> the reason its peer gave."""

_cancelling: ContextVar[tuple[Any, str] | None] = ContextVar("mcpobs_cancelling1", default=None)
"""(request id, reason) of the `notifications/cancelled` the session's receive loop just parsed."""


def reason(responder: Any) -> str | None:
    """The reason the peer gave for cancelling the request this responder answers (taken: read once)."""
    return _reasons.pop(responder, None)


def patches() -> list[Patch]:
    def validate_notification(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ClientNotification.model_validate(obj)`: a cancel's reason, for the `cancel` that follows."""
        notification = wrapped(*args, **kwargs)
        root = getattr(notification, "root", None)
        if getattr(root, "method", None) == "notifications/cancelled":
            with guarded("cancel reason"):
                reason = root.params.reason  # pyright: ignore[reportOptionalMemberAccess]
                if isinstance(reason, str):
                    _cancelling.set((root.params.requestId, clean(reason, S.MAX_REASON_LENGTH)))  # pyright: ignore[reportOptionalMemberAccess]
        return notification

    def cancel(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `RequestResponder.cancel()`: the reason noted for the request it names."""
        noted = _cancelling.get()
        if noted is not None:
            with guarded("cancel reason"):
                _cancelling.set(None)
                if noted[0] == instance.request_id:
                    _reasons[instance] = noted[1]
        return wrapped(*args, **kwargs)

    return [
        Patch.of(I.SERVER1_VALIDATE_NOTIFICATION, validate_notification),
        Patch.of(I.SERVER1_CANCEL, cancel),
    ]
