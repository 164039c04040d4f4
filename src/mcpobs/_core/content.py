"""Opt-in capture of tool arguments and results, on the server and the client alike.

Off unless the user opts in (`instrument(capture_content=True)` or
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT): they carry customers' data. When on,
they pass the privacy step (`Privacy.content`: the user's `redact`, JSON, cut to
`max_content_length`). `requestState`, headers and tokens are never part of what is captured.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from mcpobs._core.privacy import Privacy

_RESULT_KEYS = ("content", "structuredContent", "isError")


def arguments(params: Mapping[str, Any] | None, privacy: Privacy) -> str | None:
    if not params or "arguments" not in params:
        return None
    return privacy.content(params.get("arguments"))


def result(value: Any, privacy: Privacy) -> str | None:
    if not isinstance(value, Mapping):
        return None
    reply = cast("Mapping[str, object]", value)
    return privacy.content({k: reply[k] for k in _RESULT_KEYS if k in reply})


def sent_arguments(value: Any, privacy: Privacy) -> str | None:
    """The arguments a client sent with tools/call."""
    return privacy.content(value)


def received_result(value: Any, privacy: Privacy) -> str | None:
    """The `CallToolResult` a client received, as the same JSON the server side records."""
    dump = getattr(value, "model_dump", None)
    if dump is None:
        return None
    return result(dump(by_alias=True, mode="json", exclude_none=True), privacy)
