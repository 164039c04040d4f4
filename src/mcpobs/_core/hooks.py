"""The user's own hooks (`server_request_hook`, ...), run so they can never reach the call.

A hook is handed a read-only view (`_core/copies.py`): what it reads is a copy, so editing it
changes neither the request, the result, the caller's objects nor what the host receives. A
hook that raises (setting an attribute of the view does) is logged (with its traceback, the
first time) and the call goes on.
"""

from __future__ import annotations

from typing import Any

from mcpobs._core.config import Hook
from mcpobs._core.copies import for_hook
from mcpobs._core.guard import report


def run(name: str, hook: Hook, span: Any, value: Any) -> None:
    try:
        hook(span, for_hook(value))
    except Exception as exc:
        report(f"the user's {name}", exc)
