"""The tool-call corpus `contract replay` rebuilds from the spans instrumented servers recorded.

Each server `tools/call` span carries its call's argument and result shape ids, and, the first
time a process sees a shape and again as its count grows, the whole value-free shape with its
running count and the tool's schemas (docs/contract.md, "The corpus"). Folded together they
say, per tool and schema fingerprint, which shapes clients send, how often, from which client
versions, with one example trace each.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from mcpobs import semconv as S
from mcpobs._cli.render import Span
from mcpobs._cli.stores.jaeger import Jaeger
from mcpobs._cli.stores.otlp_files import file_spans
from mcpobs._cli.stores.reading import integer, loads
from mcpobs._core.contract import schema_fingerprint
from mcpobs.semconv import Boundary, Outcome

EXAMPLES = 3
"""Example traces kept per shape (and shown per verdict line)."""
REFUSED_AT = frozenset({Boundary.ARGUMENTS.value, Boundary.DISCOVERY.value})
"""Where a `client_error` means the server refused the call's arguments or tool: the call never ran."""
UNSAID = frozenset({"?", Outcome.CANCELLED.value})
"""Outcomes that do not say whether the arguments were accepted."""

SHAPE_IDS = frozenset({S.TOOL_ARGUMENTS_SHAPE_ID, S.TOOL_RESULT_SHAPE_ID})
"""A span carrying one of these is a tool call with its shapes recorded."""


@dataclass
class Shape:
    """One recorded shape of one tool's arguments or result, under one schema fingerprint."""

    tool: str
    fingerprint: str
    direction: str
    id: str
    definition: Any = None
    spans: int = 0
    counts: dict[tuple[str, str], int] = field(default_factory=dict[tuple[str, str], int])
    """(recorder, client) -> the highest running count seen."""
    clients: set[str] = field(default_factory=set[str])
    models: set[str] = field(default_factory=set[str])
    outcomes: dict[str, int] = field(default_factory=dict[str, int])
    trace_id: str | None = None
    accepted: int = 0
    """Spans of this shape the server took past its argument check (any outcome but a refusal of them)."""
    rejected: int = 0
    """Spans whose arguments or tool the server refused (`client_error` at `arguments` or `discovery`)."""
    accepted_traces: list[str] = field(default_factory=list[str])
    """Up to `EXAMPLES` traces of accepted calls: the examples a verdict about them names."""
    accepted_clients: set[str] = field(default_factory=set[str])

    @property
    def calls(self) -> int:
        """Calls behind this shape: the running counts the processes reported, or the spans found if more."""
        return max(self.spans, sum(self.counts.values()))

    @property
    def today(self) -> str | None:
        """What the running release did with this shape, from the outcomes recorded with it: "accepted" when
        any call of it got past the argument check, "rejected" when every one that said was refused,
        None when none said (spans recorded before mcpobs wrote outcomes with shapes)."""
        if self.accepted:
            return "accepted"
        return "rejected" if self.rejected else None

    @property
    def accepted_calls(self) -> int:
        """The calls behind this shape that got past the argument check: all of them unless some were refused
        (a value a shape does not hold, such as a pattern, decided it), then the accepted share of the count."""
        if not self.rejected:
            return self.calls
        return max(self.accepted, round(self.calls * self.accepted / (self.accepted + self.rejected)))


@dataclass
class Corpus:
    shapes: dict[tuple[str, str, str, str], Shape] = field(default_factory=dict[tuple[str, str, str, str], Shape])
    schemas: dict[str, Any] = field(default_factory=dict[str, Any])
    """schema fingerprint -> {"input": ..., "output": ...}, as the servers recorded them."""
    spans: int = 0
    seen: set[tuple[str, str]] = field(default_factory=set[tuple[str, str]])
    """(trace id, span id) of every span counted."""

    def add_span(self, span: Span) -> None:
        """Count one span (once, however often it is read: two tools in one trace, overlapping files)."""
        seen = (span.trace_id, span.span_id)
        if seen in self.seen:
            return
        self.seen.add(seen)
        self.add(span.attributes, span.trace_id or None)

    def add(self, attrs: Mapping[str, Any], trace_id: str | None) -> None:
        tool = attrs.get(S.GEN_AI_TOOL_NAME)
        fingerprint = attrs.get(S.TOOL_SCHEMA_FINGERPRINT)
        if not isinstance(tool, str) or not isinstance(fingerprint, str):
            return
        definition = attrs.get(S.TOOL_SCHEMA_DEFINITION)
        if isinstance(definition, str) and fingerprint not in self.schemas:
            schemas = loads(definition)
            if isinstance(schemas, dict):
                schemas = cast(dict[str, Any], schemas)
                if schema_fingerprint(schemas.get("input"), schemas.get("output")) == fingerprint:
                    self.schemas[fingerprint] = schemas  # a definition cut short by a length limit is no use
        client = "/".join(str(attrs[k]) for k in (S.CLIENT_NAME, S.CLIENT_VERSION) if k in attrs) or "?"
        model = attrs.get(S.GEN_AI_RESPONSE_MODEL) or attrs.get(S.GEN_AI_REQUEST_MODEL)
        outcome = str(attrs.get(S.OUTCOME, "?"))
        refused = outcome == Outcome.CLIENT_ERROR.value and attrs.get(S.FAILURE_BOUNDARY) in REFUSED_AT
        recorder = attrs.get(S.TOOL_SHAPE_RECORDER)
        counted = False
        for direction, ident_key, definition_key, count_key in (
            ("input", S.TOOL_ARGUMENTS_SHAPE_ID, S.TOOL_ARGUMENTS_SHAPE_DEFINITION, S.TOOL_ARGUMENTS_SHAPE_COUNT),
            ("output", S.TOOL_RESULT_SHAPE_ID, S.TOOL_RESULT_SHAPE_DEFINITION, S.TOOL_RESULT_SHAPE_COUNT),
        ):
            ident = attrs.get(ident_key)
            if not isinstance(ident, str):
                continue
            counted = True
            key = (tool, fingerprint, direction, ident)
            shape = self.shapes.get(key)
            if shape is None:
                shape = self.shapes[key] = Shape(tool, fingerprint, direction, ident)
            shape.spans += 1
            shape.clients.add(client)
            if isinstance(model, str):
                shape.models.add(model)
            shape.outcomes[outcome] = shape.outcomes.get(outcome, 0) + 1
            if shape.trace_id is None and trace_id:
                shape.trace_id = trace_id
            if refused:
                shape.rejected += 1
            elif outcome not in UNSAID:
                shape.accepted += 1
                shape.accepted_clients.add(client)
                if trace_id and len(shape.accepted_traces) < EXAMPLES and trace_id not in shape.accepted_traces:
                    shape.accepted_traces.append(trace_id)
            if shape.definition is None and isinstance(text := attrs.get(definition_key), str):
                shape.definition = _shape(loads(text))
            count = integer(attrs.get(count_key))
            if count is not None and isinstance(recorder, str):
                slot = (recorder, client)
                shape.counts[slot] = max(shape.counts.get(slot, 0), count)
        self.spans += counted

    def calls(self, tool: str, fingerprint: str) -> tuple[int, set[str], str | None]:
        """Calls of `tool` made with schema `fingerprint`: (count, clients, an example trace)."""
        count, clients, trace = 0, set[str](), None
        for direction in ("input", "output"):
            found = [
                s
                for s in self.shapes.values()
                if (s.tool, s.fingerprint, s.direction) == (tool, fingerprint, direction)
            ]
            if found:
                for shape in found:
                    count += shape.calls
                    clients |= shape.clients
                    trace = trace or shape.trace_id
                break
        return count, clients, trace

    def as_json(self) -> dict[str, Any]:
        return {
            "spans": self.spans,
            "shapes": [
                {
                    "tool": s.tool,
                    "schema_fingerprint": s.fingerprint,
                    "direction": s.direction,
                    "id": s.id,
                    "definition": s.definition,
                    "calls": s.calls,
                    "clients": sorted(s.clients),
                    "models": sorted(s.models),
                    "outcomes": s.outcomes,
                    "today": s.today,
                    "example_trace_id": s.trace_id,
                }
                for s in sorted(self.shapes.values(), key=lambda s: (s.tool, s.fingerprint, s.direction, -s.calls))
            ],
            "schemas": self.schemas,
        }


def _shape(definition: Any) -> Any:
    """A recorded shape as `mcpobs._core.shapes` writes them, or None: `{"{}": {...}}` holds an object's fields,
    `{"[]": [...]}` an array's element shapes, all the way down (the depth is bounded by `stores.reading.loads`)."""
    pending = [definition]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            node = cast(dict[str, Any], node)
            if "{}" in node:
                if not isinstance(node["{}"], dict):
                    return None
                pending.extend(cast(dict[str, Any], node["{}"]).values())
            elif "[]" in node:
                if not isinstance(node["[]"], list):
                    return None
                pending.extend(cast(list[Any], node["[]"]))
    return definition


def from_file(path: str) -> Corpus:
    """The corpus in an OTLP JSON file, as a collector's `file` exporter writes it."""
    corpus = Corpus()
    for span in file_spans(path, SHAPE_IDS):
        corpus.add_span(span)
    return corpus


def from_jaeger(jaeger: Jaeger, service: str, since: timedelta, limit: int) -> Corpus:
    """The corpus from Jaeger's query API: one search per `tools/call` operation of the service."""
    prefix = S.span_name("tools/call", "")
    names = sorted({n for n in jaeger.operations(service) if n.startswith(prefix)})
    corpus = Corpus()
    end = datetime.now(UTC) + timedelta(minutes=1)
    start = end - since - timedelta(minutes=1)
    for name in names:
        params = {
            "query.service_name": service,
            "query.operation_name": name,
            "query.start_time_min": start.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "query.start_time_max": end.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "query.num_traces": str(limit),
        }
        for span in jaeger.otlp_spans(params, SHAPE_IDS):
            corpus.add_span(span)
    return corpus


def write(corpus: Corpus, path: str) -> None:
    """The corpus as JSON (`--corpus FILE`)."""
    from pathlib import Path

    Path(path).write_text(json.dumps(corpus.as_json(), indent=2, sort_keys=True) + "\n")
