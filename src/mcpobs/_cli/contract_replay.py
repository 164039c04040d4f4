"""`mcpobs contract replay`: would a candidate release accept the calls clients make today?

The corpus is what instrumented servers already put on their tools/call spans (docs/contract.md,
"The corpus"): each call's argument and result shape ids, and, the first time a process sees a
shape and again as its count grows, the whole value-free shape with its running count and the
tool's schemas. The replay reads those spans from Jaeger's query API or from OTLP JSON (what a
collector's file exporter writes), rebuilds the corpus (shape -> calls, client versions, one
example trace) and checks

- each recorded argument shape against the candidate's input schema: a field callers omit that
  is now required, a field callers send that is gone or forbidden (`additionalProperties:
  false`), a value of another type, an enum member callers send that the candidate dropped;
- for each schema fingerprint clients were calling with, the candidate's output schema against
  the output schema those clients hold (the same comparison `contract diff` makes, output
  direction): a renamed or retyped output field fails every client that listed the old release.

What a shape cannot decide (a new pattern, format or range: the values were never recorded) is
listed as undecided. Exit status 0 when nothing would fail, 1 when something would, 2 when an
argument or the trace store cannot be used.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, cast

from mcpobs import semconv as S
from mcpobs._cli import CommandError
from mcpobs._cli import contract_diff as _diff
from mcpobs._core.contract import schema_fingerprint
from mcpobs._core.shapes import _alternatives  # pyright: ignore[reportPrivateUsage]

Kind = Literal["fail", "undecided"]
_UNDECIDABLE = (
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "patternProperties",
    "propertyNames",
    "not",
)
"""Keywords whose verdict depends on a value a shape does not hold."""
_SHAPE_IDS = frozenset({S.TOOL_ARGUMENTS_SHAPE_ID, S.TOOL_RESULT_SHAPE_ID})
_DEFAULT_SINCE = "24h"
_DEFAULT_LIMIT = 2000


# -- the corpus --------------------------------------------------------------------------------


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

    @property
    def calls(self) -> int:
        """Calls behind this shape: the running counts the processes reported, or the spans found if more."""
        return max(self.spans, sum(self.counts.values()))


@dataclass
class Corpus:
    shapes: dict[tuple[str, str, str, str], Shape] = field(default_factory=dict[tuple[str, str, str, str], Shape])
    schemas: dict[str, Any] = field(default_factory=dict[str, Any])
    """schema fingerprint -> {"input": ..., "output": ...}, as the servers recorded them."""
    spans: int = 0
    seen: set[tuple[str | None, Any]] = field(default_factory=set[tuple[str | None, Any]])
    """(trace id, span id) of every span counted."""

    def add(self, attrs: Mapping[str, Any], trace_id: str | None) -> None:
        tool = attrs.get(S.GEN_AI_TOOL_NAME)
        fingerprint = attrs.get(S.TOOL_SCHEMA_FINGERPRINT)
        if not isinstance(tool, str) or not isinstance(fingerprint, str):
            return
        definition = attrs.get(S.TOOL_SCHEMA_DEFINITION)
        if isinstance(definition, str) and fingerprint not in self.schemas:
            schemas = _loads(definition)
            if isinstance(schemas, dict):
                schemas = cast(dict[str, Any], schemas)
                if schema_fingerprint(schemas.get("input"), schemas.get("output")) == fingerprint:
                    self.schemas[fingerprint] = schemas  # a definition cut short by a length limit is no use
        client = "/".join(str(attrs[k]) for k in (S.CLIENT_NAME, S.CLIENT_VERSION) if k in attrs) or "?"
        model = attrs.get(S.GEN_AI_RESPONSE_MODEL) or attrs.get(S.GEN_AI_REQUEST_MODEL)
        outcome = str(attrs.get(S.OUTCOME, "?"))
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
            if shape.definition is None and isinstance(text := attrs.get(definition_key), str):
                shape.definition = _loads(text)
            count = _integer(attrs.get(count_key))
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
                    "example_trace_id": s.trace_id,
                }
                for s in sorted(self.shapes.values(), key=lambda s: (s.tool, s.fingerprint, s.direction, -s.calls))
            ],
            "schemas": self.schemas,
        }


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


# -- reading spans -----------------------------------------------------------------------------


def _otlp_value(value: Any) -> Any:
    """An OTLP JSON AnyValue as a Python value (int64 travels as a string)."""
    if not isinstance(value, Mapping):
        return None
    value = cast(Mapping[str, Any], value)
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return _integer(value["intValue"]) if not isinstance(value["intValue"], int) else value["intValue"]
    return None


def _trace_id(raw: Any) -> str | None:
    if not isinstance(raw, str) or not raw:
        return None
    if re.fullmatch(r"[0-9a-fA-F]{32}", raw):
        return raw.lower()
    try:
        return base64.b64decode(raw, validate=True).hex()
    except (binascii.Error, ValueError):
        return raw


def add_request(corpus: Corpus, request: Any) -> None:
    """Fold one ExportTraceServiceRequest (or Jaeger's `{"result": ...}` wrapping of one) into the corpus."""
    if not isinstance(request, Mapping):
        return
    request = cast(Mapping[str, Any], request)
    if isinstance(request.get("result"), Mapping):
        request = cast(Mapping[str, Any], request["result"])
    for resource in cast(Iterable[Any], request.get("resourceSpans") or ()):
        if not isinstance(resource, Mapping):
            continue
        for scope in cast(Iterable[Any], cast(Mapping[str, Any], resource).get("scopeSpans") or ()):
            if not isinstance(scope, Mapping):
                continue
            for span in cast(Iterable[Any], cast(Mapping[str, Any], scope).get("spans") or ()):
                if not isinstance(span, Mapping):
                    continue
                span = cast(Mapping[str, Any], span)
                given: Iterable[Any] = span.get("attributes") or ()
                pairs: list[dict[str, Any]] = [a for a in given if type(a) is dict]
                if not any(a.get("key") in _SHAPE_IDS for a in pairs):
                    continue  # most spans: no shape (a client span, another method)
                attrs: dict[str, Any] = {
                    a["key"]: _otlp_value(a.get("value")) for a in pairs if isinstance(a.get("key"), str)
                }
                trace_id = _trace_id(span.get("traceId"))
                seen = (trace_id, span.get("spanId"))
                if seen in corpus.seen:
                    continue  # the same trace again (two tools in one trace, or overlapping files)
                corpus.seen.add(seen)
                corpus.add(attrs, trace_id)


def _documents(text: str) -> Iterator[Any]:
    """JSON documents one after another (one per line, as the file exporter writes, or concatenated)."""
    decoder = json.JSONDecoder()
    position, end = 0, len(text)
    while True:
        while position < end and text[position].isspace():
            position += 1
        if position >= end:
            return
        document, position = decoder.raw_decode(text, position)
        yield document


def from_file(path: str) -> Corpus:
    corpus = Corpus()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise CommandError(f"--from {path}: no such file (give the file a collector's `file` exporter writes)") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"--from {path}: cannot read it: {exc}") from exc
    try:
        for document in _documents(text):
            add_request(corpus, document)
    except ValueError as exc:
        raise CommandError(
            f"--from {path}: not OTLP JSON ({exc}); give what a collector's `file` exporter writes "
            "(one ExportTraceServiceRequest JSON per line)"
        ) from exc
    return corpus


def _fetch(url: str, timeout: float) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def from_jaeger(base: str, service: str, since: timedelta, limit: int, timeout: float = 60) -> Corpus:
    """The corpus from Jaeger's query API: one search per `tools/call` operation of the service."""
    base = (base if "://" in base else f"http://{base}").rstrip("/")
    operations_url = f"{base}/api/v3/operations?{urllib.parse.urlencode({'service': service})}"
    try:
        status, body = _fetch(operations_url, timeout)
    except OSError as exc:
        raise CommandError(
            f"cannot reach Jaeger's query API at {base} ({exc}): give --jaeger the query address "
            "(e.g. http://127.0.0.1:16686), or read a file with --from"
        ) from exc
    if status != 200:
        raise CommandError(f"Jaeger at {base} answered {status} to {operations_url}: {body[:200]!r}")
    listed: list[Any] = cast(Mapping[str, Any], _loads(body.decode("utf-8", "replace")) or {}).get("operations") or []
    prefix = S.span_name("tools/call", "")
    names = sorted(
        {
            cast(str, o.get("name"))
            for o in cast(Iterable[Mapping[str, Any]], listed)
            if isinstance(o.get("name"), str) and cast(str, o["name"]).startswith(prefix)
        }
    )
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
        url = f"{base}/api/v3/traces?{urllib.parse.urlencode(params)}"
        try:
            status, body = _fetch(url, timeout)
        except OSError as exc:
            raise CommandError(
                f"Jaeger at {base} stopped answering ({exc}); try again, or read a file with --from"
            ) from exc
        if status == 404:
            continue  # no traces of this operation in the window
        if status != 200:
            raise CommandError(f"Jaeger at {base} answered {status} to a trace search: {body[:200]!r}")
        for document in _documents(body.decode("utf-8", "replace")):
            add_request(corpus, document)
    return corpus


def parse_since(text: str) -> timedelta:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*", text)
    if not match:
        raise CommandError(f"--since {text!r}: give a duration such as 30m, 6h or 7d")
    amount, unit = float(match[1]), match[2]
    return timedelta(seconds=amount * {"s": 1, "m": 60, "h": 3600, "d": 86400}[unit])


# -- the checks --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    kind: Kind
    tool: str
    field: str
    reason: str


def _json_type(shape: Any) -> str | None:
    if isinstance(shape, str):
        return None if shape == "..." else shape
    if isinstance(shape, Mapping):
        shape = cast(Mapping[str, Any], shape)
        if "=" in shape:
            value = shape["="]
            return (
                "boolean"
                if isinstance(value, bool)
                else "integer"
                if isinstance(value, int)
                else "number"
                if isinstance(value, float)
                else "null"
                if value is None
                else "string"
            )
        if "{}" in shape:
            return "object"
        if "[]" in shape:
            return "array"
    return None


def _accepts(types: frozenset[str], kind: str) -> bool:
    return not types or kind in types or (kind == "integer" and "number" in types)


def _child(nodes: list[Mapping[str, Any]], key: str, root: Any) -> tuple[bool, list[Mapping[str, Any]]]:
    listed = False
    found: list[Mapping[str, Any]] = []
    for node in nodes:
        properties = node.get("properties")
        if isinstance(properties, Mapping) and key in properties:
            listed = True
            found.extend(_alternatives(cast(Mapping[str, Any], properties)[key], root))
    return listed, found


def _items(nodes: list[Mapping[str, Any]], root: Any) -> list[Mapping[str, Any]]:
    found: list[Mapping[str, Any]] = []
    for node in nodes:
        if isinstance(node.get("items"), Mapping):
            found.extend(_alternatives(node["items"], root))
    return found


def check_arguments(shape: Any, candidate: Any, recorded: Any) -> Iterator[tuple[Kind, str, str]]:
    """(kind, field, reason) for each way the candidate input schema would treat this argument shape
    differently; `recorded` is the input schema the shape was recorded under (None when unknown)."""
    yield from _check(
        shape, _alternatives(candidate, candidate), candidate, _alternatives(recorded, recorded), recorded, ""
    )


def _check(
    shape: Any, nodes: list[Mapping[str, Any]], root: Any, was: list[Mapping[str, Any]], was_root: Any, path: str
) -> Iterator[tuple[Kind, str, str]]:
    if not nodes:
        return
    where = path or "(root)"
    kind = _json_type(shape)
    if kind is None:
        yield "undecided", where, "nested deeper than shapes are recorded"
        return
    types = frozenset[str]().union(*(_diff._types(n) for n in nodes))  # pyright: ignore[reportPrivateUsage]
    if not _accepts(types, kind):
        yield "fail", where, f"callers send {kind}, the candidate accepts {' or '.join(sorted(types))}"
        return
    for keyword in _UNDECIDABLE:
        now = [n[keyword] for n in nodes if keyword in n]
        before = [n[keyword] for n in was if keyword in n]
        if now and now != before:
            yield "undecided", where, f"{keyword} {_short(now[0])} is new (values are not recorded)"
    members: list[Any] = []
    enumerated = False
    for node in nodes:
        if isinstance(node.get("enum"), list):
            enumerated = True
            members.extend(cast(list[Any], node["enum"]))
        if "const" in node:
            enumerated = True
            members.append(node["const"])
    if enumerated and kind not in ("object", "array"):
        if isinstance(shape, Mapping) and "=" in shape:
            value = cast(Mapping[str, Any], shape)["="]
            if not any(value == m and type(value) is type(m) for m in members):
                yield "fail", where, f"enum member {json.dumps(value)} is gone; callers send it"
        else:
            yield "undecided", where, "the candidate enumerates values; callers' values here are not recorded"
    if kind == "object":
        fields = cast(Mapping[str, Any], cast(Mapping[str, Any], shape)["{}"])
        objects = [n for n in nodes if "properties" in n or "required" in n or "additionalProperties" in n]
        required: set[str] = set()
        for node in objects:
            required.update(r for r in cast(Iterable[Any], node.get("required") or ()) if isinstance(r, str))
        prefix = f"{path}." if path else ""
        for name in sorted(required - set(fields)):
            if "*" in fields:
                yield "undecided", f"{prefix}{name}", "now required; callers send fields whose names are not recorded"
            else:
                yield "fail", f"{prefix}{name}", "required by the candidate; callers omit it"
        closed = any(n.get("additionalProperties") is False for n in objects)
        for name, sub in fields.items():
            if name == "...":
                continue
            if name == "*":
                if closed:
                    yield (
                        "fail",
                        f"{prefix}*",
                        "callers send fields the recorded schema did not list; the candidate forbids additional properties",
                    )
                continue
            listed, below = _child(objects, name, root)
            _, before = _child(was, name, was_root)
            if listed:
                yield from _check(sub, below, root, before, was_root, f"{prefix}{name}")
            elif closed:
                yield "fail", f"{prefix}{name}", "callers send it; the candidate forbids additional properties"
            elif before:
                yield (
                    "fail",
                    f"{prefix}{name}",
                    "removed from the candidate; callers send it (their values would be ignored)",
                )
    elif kind == "array":
        below, before = _items(nodes, root), _items(was, was_root)
        for element in cast(list[Any], cast(Mapping[str, Any], shape)["[]"]):
            yield from _check(element, below, root, before, was_root, f"{path}[]")


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass
class _Line:
    calls: int = 0
    clients: set[str] = field(default_factory=set[str])
    trace_id: str | None = None


def replay(corpus: Corpus, candidate: Mapping[str, Any]) -> dict[Finding, _Line]:
    """Every finding, with the calls, clients and an example trace behind it."""
    tools = {t["name"]: t for t in cast(Iterable[Mapping[str, Any]], candidate.get("tools") or ())}
    found: dict[Finding, _Line] = {}

    def note(finding: Finding, calls: int, clients: Iterable[str], trace_id: str | None) -> None:
        line = found.get(finding)
        if line is None:
            line = found[finding] = _Line()
        line.calls += calls
        line.clients.update(clients)
        line.trace_id = line.trace_id or trace_id

    for shape in corpus.shapes.values():
        if shape.direction != "input":
            continue
        tool = tools.get(shape.tool)
        if tool is None:
            note(
                Finding("fail", shape.tool, "(tool)", "removed from the candidate; callers call it"),
                shape.calls,
                shape.clients,
                shape.trace_id,
            )
            continue
        if shape.definition is None:
            note(
                Finding(
                    "undecided",
                    shape.tool,
                    "(arguments)",
                    "a shape whose definition is not in the window (widen --since; or it was longer than the server's max_attribute_length)",
                ),
                shape.calls,
                shape.clients,
                shape.trace_id,
            )
            continue
        recorded_schemas: Mapping[str, Any] = corpus.schemas.get(shape.fingerprint) or {}
        recorded = recorded_schemas.get("input")
        for kind, where, reason in check_arguments(shape.definition, tool.get("inputSchema"), recorded):
            note(Finding(kind, shape.tool, where, reason), shape.calls, shape.clients, shape.trace_id)

    called = {(s.tool, s.fingerprint) for s in corpus.shapes.values()}
    for name, fingerprint in sorted(called):
        tool = tools.get(name)
        if tool is None:
            if not any(s.tool == name and s.direction == "input" for s in corpus.shapes.values()):
                calls, clients, trace = corpus.calls(name, fingerprint)
                note(
                    Finding("fail", name, "(tool)", "removed from the candidate; callers call it"),
                    calls,
                    clients,
                    trace,
                )
            continue
        schemas = corpus.schemas.get(fingerprint)
        calls, clients, trace = corpus.calls(name, fingerprint)
        if schemas is None:
            note(
                Finding(
                    "undecided",
                    name,
                    "(output)",
                    f"schema {fingerprint} was not recorded in the window (widen --since, or raise the server's max_attribute_length): its clients' output schema is unknown",
                ),
                calls,
                clients,
                trace,
            )
            continue
        held, offered = schemas.get("output"), tool.get("outputSchema")
        if held is None:
            continue  # those clients validate no structured content
        if offered is None:
            note(
                Finding(
                    "fail", name, "(output)", "output schema removed; clients holding it expect structured content"
                ),
                calls,
                clients,
                trace,
            )
            continue
        for verdict, what in _diff._walk("output", "", held, offered, held, offered):  # pyright: ignore[reportPrivateUsage]
            if verdict == "breaking":
                where, _, reason = what.partition(": ")
                note(
                    Finding("fail", name, f"output {where}", f"{reason} (for clients holding schema {fingerprint})"),
                    calls,
                    clients,
                    trace,
                )
    return found


# -- command line ------------------------------------------------------------------------------


def main_replay(
    candidate: str,
    *,
    jaeger: str | None,
    service: str | None,
    since: str,
    source: str | None,
    limit: int,
    corpus_out: str | None,
) -> tuple[str, int]:
    if (jaeger is None) == (source is None):
        raise CommandError("say where the corpus is: --jaeger URL --service NAME, or --from FILE (OTLP JSON)")
    if jaeger is not None and not service:
        raise CommandError("--jaeger needs --service NAME: the service.name of the servers whose calls to replay")
    if limit < 1:
        raise CommandError(f"--limit {limit}: give a positive number of traces per tool")
    window = parse_since(since)
    wanted = _diff._read(candidate)  # pyright: ignore[reportPrivateUsage]
    started = time.perf_counter()
    corpus = (
        from_file(source) if source is not None else from_jaeger(cast(str, jaeger), cast(str, service), window, limit)
    )
    if corpus_out:
        Path(corpus_out).write_text(json.dumps(corpus.as_json(), indent=2, sort_keys=True) + "\n")
    where = f"--from {source}" if source is not None else f"service {service} in Jaeger, last {since}"
    if not corpus.shapes:
        raise CommandError(
            f"no recorded tool-call shapes in {where}: are the servers instrumented by mcpobs with record_shapes on "
            "(the default), is the service name right, and did the window see calls? (tail sampling: see "
            "docs/contract.md for the policy that keeps every shape)"
        )
    findings = replay(corpus, wanted)
    elapsed = time.perf_counter() - started
    order = {"fail": 0, "undecided": 1}
    lines: list[str] = []
    for finding, line in sorted(
        found_items(findings), key=lambda kv: (order[kv[0].kind], kv[0].tool, kv[0].field, kv[0].reason)
    ):
        clients = ", ".join(sorted(line.clients))
        example = f"; e.g. trace {line.trace_id}" if line.trace_id else ""
        lines.append(
            f"{finding.kind}: {finding.tool}: {finding.field}: {finding.reason} "
            f"({line.calls} call{'s' if line.calls != 1 else ''}; clients {clients}{example})"
        )
    failures = sum(1 for f in findings if f.kind == "fail")
    undecided = len(findings) - failures
    tools = {s.tool for s in corpus.shapes.values()}
    calls = sum(s.calls for s in corpus.shapes.values() if s.direction == "input")
    summary = (
        f"replayed {sum(1 for s in corpus.shapes.values() if s.direction == 'input')} argument shapes and "
        f"{_plural(len({(s.tool, s.fingerprint) for s in corpus.shapes.values()}), 'schema fingerprint')} of {len(tools)} "
        f"tool{'s' if len(tools) != 1 else ''} ({calls} calls, {where}) against {candidate} in {elapsed:.2f}s: "
        f"{failures} would fail, {undecided} undecided"
    )
    lines.append(summary)
    if failures:
        lines.append(
            "the candidate would reject calls clients make today: keep the old behaviour (the field optional, the "
            "enum member, the property allowed, the output field), or ship the change as a new tool and keep the "
            "old one through the catalog cache and client upgrade windows (docs/contract.md)"
        )
    elif undecided:
        lines.append("nothing would fail on what shapes can tell; check the undecided lines by hand or in a test")
    return "\n".join(lines), 1 if failures else 0


def found_items(findings: dict[Finding, _Line]) -> list[tuple[Finding, _Line]]:
    return list(findings.items())


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
