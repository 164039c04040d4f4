"""The user's own hooks (`server_request_hook`, ...), run so they can never reach the call.

A hook that raises is logged (with its traceback, the first time) and the call goes on.
"""

from __future__ import annotations

from typing import Any

from mcpobs._core.config import Hook
from mcpobs._core.guard import report


def run(name: str, hook: Hook, span: Any, value: Any) -> None:
    try:
        hook(span, value)
    except Exception as exc:
        report(f"the user's {name}", exc)
