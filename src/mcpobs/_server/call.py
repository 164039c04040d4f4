"""One request in flight on the server side: what `ServerMiddleware` keeps from a request's start to its finish.

Made where the span opens, it enters the request's state (`state.py`) and makes the span
current; the middleware's finish reads it to classify, end the span and record the metrics.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from opentelemetry.trace import Span

from mcpobs._core import runtime_context
from mcpobs._server import state as _state


class Call:
    """One request in flight: what `ServerMiddleware._finish` needs from its `_start`."""

    __slots__ = (
        "context",
        "labels_key",
        "method",
        "names_target",
        "otel_token",
        "session_key",
        "span",
        "start",
        "state",
        "state_token",
        "verdict_asked",
    )

    def __init__(
        self,
        method: str,
        target: str | None,
        labels_key: tuple[Any, ...],
        span: Span,
        session: object,
        later: Mapping[str, Any],
        verdict_asked: bool = False,
    ) -> None:
        self.method = method
        self.verdict_asked = verdict_asked
        """The client asked for the verdict on this tools/call (`_core/verdict.py`)."""
        self.names_target = target
        """The registered tool or prompt the request names (None for an unknown one)."""
        self.labels_key = labels_key
        """(method, version, target attribute, bounded target, network): see `labels.base_labels`."""
        self.span = span
        self.state = _state.RequestState(method, target, span, later)
        self.context = runtime_context.in_span(span)
        self.otel_token = runtime_context.attach(self.context)
        self.state_token = _state.enter(self.state)
        self.session_key = _state.serving(session, self.state)
        self.start = time.perf_counter()
