"""Finished spans of a task's life, for the 1.x tasks tests (the work ends after the answer that saw it)."""

from __future__ import annotations

import asyncio
from typing import Any

from opentelemetry.trace import SpanKind


async def settled(spans: Any, done: Any, timeout: float = 5.0) -> list[Any]:
    """The finished spans once `done(spans)` holds (the work ends after the answer that saw it)."""
    for _ in range(int(timeout / 0.05)):
        found = spans.spans()
        if done(found):
            return found
        await asyncio.sleep(0.05)
    return spans.spans()


def named(found: list[Any], name: str, kind: SpanKind) -> list[Any]:
    return [s for s in found if s.name == name and s.kind is kind]


def one(found: list[Any], name: str, kind: SpanKind) -> Any:
    spans = named(found, name, kind)
    assert len(spans) == 1, (name, kind, [(s.name, s.kind) for s in found])
    return spans[0]
