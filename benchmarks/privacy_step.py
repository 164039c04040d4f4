"""What the privacy step (`mcpobs._core.privacy`) costs per recorded text, in instructions.

The trivial call (a tools/call that succeeds, no URI, no progress) never reaches the step:
`overhead.py --instructions` measures that path whole. This measures the step itself where it
runs, each beside a baseline taken in the same run: what mcpobs did before the step existed
(the exception's text cleaned and recorded as it was, the URI and the progress message only
bounded).

    python benchmarks/privacy_step.py --instructions   # instructions per text, each under callgrind
    python benchmarks/privacy_step.py                  # CPU µs per text

Printed as a Markdown table: instructions (or µs) per text, and the ratio to its baseline.
"""

from __future__ import annotations

import traceback
from typing import Any

from harness import pairs

N = 2000


def _old_exception_attributes(exc: BaseException, limit: int) -> dict[str, Any]:
    """The event attributes before the step: message and full traceback, cleaned (text.py at 255a323)."""
    from mcpobs._core.text import clean, clean_tail

    stack = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {"exception.message": clean(exc, limit), "exception.stacktrace": clean_tail(stack, limit)}


def _raised() -> BaseException:
    def charge(card: str) -> None:
        raise ValueError(f"card {card} declined")

    try:
        try:
            charge("4111111111111111")
        except ValueError as exc:
            raise RuntimeError("Error executing tool charge") from exc
    except RuntimeError as exc:
        return exc
    raise AssertionError


def cases() -> dict[str, tuple[Any, Any]]:
    """name: (baseline, the step), each a no-argument function doing one text."""
    from mcpobs._core.config import Settings
    from mcpobs._core.privacy import Privacy
    from mcpobs._core.text import clean

    privacy = Privacy(Settings(record_progress_messages=True))  # the opt-in: off, a message costs nothing
    exc = _raised()
    limit = 4096
    plain = "shop://catalog"
    secret = "vault://alice:pw@vault.example/doc?token=abc&X-Goog-Signature=def#p2"
    message = "exported 3/10"
    content = _content_cases()
    return {
        **content,
        "exception event + description": (
            lambda: (_old_exception_attributes(exc, limit), clean(str(exc), 256)),
            lambda: (privacy.exception_event(exc), privacy.description(exc)),
        ),
        "resource URI, plain": (lambda: clean(plain, limit), lambda: privacy.uri(plain)),
        "resource URI, userinfo and query (cached)": (lambda: clean(secret, limit), lambda: privacy.uri(secret)),
        "progress message": (lambda: clean(message, limit), lambda: privacy.progress(message)),
    }


def _in_place_redact(value: Any) -> Any:
    if isinstance(value, dict):
        for holder in (value, value.get("structuredContent")):
            if isinstance(holder, dict) and "card" in holder:
                holder["card"] = "***"
        for part in value.get("content") or ():
            if isinstance(part, dict) and "text" in part:
                part["text"] = "***"
    return value


def _content_cases() -> dict[str, tuple[Any, Any]]:
    """The copies `redact` and the hooks are handed (`_core/copies.py`), and the caller's context
    at the server's boundary (`_server/incoming.py`), each beside what ran before them.

    With content capture off and no hook, neither copy is made: those two rows run only when
    content is captured (with a `redact`) or a hook is set. The boundary's row runs on every
    call that carries a `traceparent`, capture on or off."""
    import json

    from mcp_types import CallToolResult, TextContent
    from opentelemetry.sdk.trace import TracerProvider

    from mcpobs._core import hooks, propagation
    from mcpobs._core.config import Settings
    from mcpobs._core.privacy import Privacy
    from mcpobs._core.telemetry import Telemetry
    from mcpobs._core.text import clean
    from mcpobs._server.incoming import accepted

    settings = Settings(capture_content=True, redact=_in_place_redact)
    privacy = Privacy(settings)
    arguments = {"card": "4111111111111111", "order_id": "O-1873", "lines": [{"sku": "A-1", "qty": 2}] * 4}
    result = {
        "content": [{"type": "text", "text": '{"card": "4111111111111111", "status": "charged"}'}],
        "structuredContent": {"card": "4111111111111111", "status": "charged"},
        "isError": False,
    }

    def before_copies() -> None:  # redact handed the call's own values, then JSON (privacy.content at f59b06a)
        for value in (arguments, result):
            clean(json.dumps(_in_place_redact(value), ensure_ascii=False), 16384)

    def with_copies() -> None:
        privacy.content(arguments)
        privacy.content(result)

    model = CallToolResult(content=[TextContent(type="text", text="charged")], structured_content={"status": "ok"})

    def hook(span: Any, value: Any) -> None:
        return None

    telemetry = Telemetry(Settings(), TracerProvider())
    meta = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "tracestate": "v=1"}
    instrumented = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
    labels = {"mcp.method.name": "tools/call", "gen_ai.tool.name": "charge"}
    return {
        "captured arguments + result, an in-place redact (capture on)": (before_copies, with_copies),
        "a response hook handed a CallToolResult": (
            lambda: hook(None, model),
            lambda: hooks.run("server_response_hook", hook, None, model),
        ),
        "a caller's traceparent at the server's boundary (join, sampled, as mcpobs's client sends it)": (
            lambda: propagation.extract(instrumented),
            lambda: accepted(propagation.extract(instrumented), telemetry, "tools/call charge", labels),
        ),
        "a caller's traceparent at the server's boundary (join, -00 and a tracestate)": (
            lambda: propagation.extract(meta),
            lambda: accepted(propagation.extract(meta), telemetry, "tools/call charge", labels),
        ),
    }


if __name__ == "__main__":
    pairs.main(cases, __file__, N, ("text", "before the step", "the step"))
