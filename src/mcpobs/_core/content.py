"""Opt-in capture of tool arguments and results, on the server and the client alike.

Off unless the user opts in (`instrument(capture_content=True)` or
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT): they carry customers' data. When on,
they are redacted by the user's hook, serialised as JSON and cut to `max_content_length`.
`requestState`, headers and tokens are never part of what is captured.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcpobs._core.config import Settings
from mcpobs._core.text import clean

_RESULT_KEYS = ("content", "structuredContent", "isError")


def _render(value: Any, settings: Settings) -> str:
    if settings.redact is not None:
        value = settings.redact(value)
    text = json.dumps(value, default=str, ensure_ascii=False)
    limit = settings.max_content_length
    return clean(text, limit)


def arguments(params: Mapping[str, Any] | None, settings: Settings) -> str | None:
    if not params or "arguments" not in params:
        return None
    return _render(params.get("arguments"), settings)


def result(value: Any, settings: Settings) -> str | None:
    if not isinstance(value, Mapping):
        return None
    return _render({k: value[k] for k in _RESULT_KEYS if k in value}, settings)


def sent_arguments(value: Any, settings: Settings) -> str:
    """The arguments a client sent with tools/call."""
    return _render(value, settings)


def received_result(value: Any, settings: Settings) -> str | None:
    """The `CallToolResult` a client received, as the same JSON the server side records."""
    dump = getattr(value, "model_dump", None)
    if dump is None:
        return None
    return result(dump(by_alias=True, mode="json", exclude_none=True), settings)
