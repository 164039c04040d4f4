"""Trace trees and the metrics table, as the demo prints them and `python -m mcpobs show` too.

Both commands print the same picture from different sources: the demo from the SDK's
in-memory spans and metric points, `show` from Jaeger's query API and Prometheus. Each
converts its source into the plain rows here, so a span or a count reads the same in both
and one renderer decides how it looks.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from mcpobs import semconv as S
from mcpobs._core.text import escaped

KEY_ATTRIBUTES = (
    S.GEN_AI_TOOL_NAME,
    S.FAILURE_BOUNDARY,
    S.ERROR_TYPE,
    S.RPC_RESPONSE_STATUS_CODE,
    S.MRTR_ROUND,
    S.MRTR_INPUT_METHODS,
    S.PROGRESS_VALUE,
    S.PROGRESS_TOTAL,
    S.PROGRESS_MESSAGE,
    S.PROGRESS_DROPPED,
    S.SUBSCRIPTION_EVENT,
    S.CANCEL_REASON,
)
"""The attributes a tree line shows after the outcome (by the last part of their name)."""
MAX_INDENT = 32
"""Deeper spans are shown at this depth (indented no further)."""
MAX_TEXT = 200
"""The longest text from a span or a series shown (a value, a name); the rest is counted, not shown."""


@dataclass(frozen=True)
class Span:
    """One span as a tree line needs it, whatever stored it."""

    span_id: str
    parent_id: str | None
    name: str
    kind: str  # SERVER, CLIENT, INTERNAL, PRODUCER, CONSUMER
    start_ns: int
    duration_ns: int
    attributes: Mapping[str, Any] = field(default_factory=dict[str, Any])
    service: str = ""
    trace_id: str = ""


@dataclass(frozen=True)
class MetricRow:
    """One series of a request metric: a counter's value, or a histogram's count and sum (seconds)."""

    metric: str
    method: str
    tool: str
    outcome: str
    boundary: str
    value: float | None = None
    count: float | None = None
    total: float | None = None


def tree(spans: Sequence[Span], out: TextIO) -> None:
    """Write one trace's spans as an indented tree: children under their parent, in start order.

    A span whose parent is not among `spans` (the caller's own span was not exported, or is
    in a trace Jaeger has not stored) is a root. Every text is `printable`: names and values
    come from whoever wrote the spans.
    """
    by_parent: dict[str | None, list[Span]] = defaultdict(list)
    ids = {s.span_id for s in spans}
    for s in spans:
        by_parent[s.parent_id if s.parent_id in ids else None].append(s)
    pending = [(root, 1) for root in sorted(by_parent[None], key=lambda r: r.start_ns, reverse=True)]
    while pending:  # a stack, not recursion: a stored trace can nest as deep as its writer liked
        span, depth = pending.pop()
        a = span.attributes
        ms = span.duration_ns / 1e6
        extras = " ".join(f"{k.split('.')[-1]}={printable(a[k])}" for k in KEY_ATTRIBUTES if k in a)
        outcome = printable(a.get(S.OUTCOME, ""))
        name, kind = printable(span.name, 120), printable(span.kind, 16)
        out.write(f"{'  ' * min(depth, MAX_INDENT)}{name:<34} {kind:<8} {ms:8.1f} ms  {outcome:<13} {extras}\n")
        children = sorted(by_parent.get(span.span_id, []), key=lambda c: c.start_ns, reverse=True)
        pending.extend((child, depth + 1) for child in children)


def table(rows: Iterable[MetricRow], out: TextIO) -> None:
    """Write the request metrics, metric by metric (in the order first seen), one line per series."""
    by_metric: dict[str, list[MetricRow]] = {}
    for row in rows:
        by_metric.setdefault(row.metric, []).append(row)
    for metric, series in by_metric.items():
        out.write(f"  {printable(metric, 120)}\n")
        for r in sorted(series, key=lambda r: (r.method, r.tool, r.outcome, r.boundary)):
            what = f"{printable(r.method, 80)} {printable(r.tool, 120)}".strip()
            label = f"{what:<30} {printable(r.outcome, 40):<13} {printable(r.boundary, 40)}"
            if r.count is not None:
                mean = (r.total or 0.0) / max(r.count, 1) * 1000
                out.write(f"    {label:<60} n={_number(r.count)} mean={mean:.1f} ms\n")
            else:
                out.write(f"    {label:<60} {_number(r.value or 0)}\n")


def printable(value: object, limit: int = MAX_TEXT) -> str:
    """`value` as text a terminal shows as it is: controls and escape sequences escaped (``\\x1b``,
    ``\\n``, ``\\u202e``), and at most `limit` characters of it, the rest counted."""
    text = value if type(value) is str else _text(value)
    cut = len(text) - limit
    if cut > 0:
        text = text[:limit]
    text = escaped(text)  # the one escaper of text from outside (`_core/text.py`), as in mcpobs's log lines
    return f"{text}...(+{cut} characters)" if cut > 0 else text


def _text(value: object) -> str:
    try:
        return str(value)
    except Exception:  # a huge int (str() refuses past 4300 digits), a __str__ that raises
        return f"<{type(value).__name__}>"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
