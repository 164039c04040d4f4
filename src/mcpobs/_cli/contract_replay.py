"""`mcpobs contract replay`: would a candidate release accept the calls clients make today?

The corpus (`corpus.py`) is rebuilt from the tools/call spans instrumented servers recorded, in
Jaeger or in OTLP JSON (`stores/`). The replay checks (`schemas.py`)

- each recorded argument shape against the candidate's input schema: a field callers omit that
  is now required, a field callers send that is gone or forbidden (`additionalProperties:
  false`), a value of another type, an enum member callers send that the candidate dropped;
- for each schema fingerprint clients were calling with, the candidate's output schema against
  the output schema those clients hold (the same comparison `contract diff` makes, output
  direction): a renamed or retyped output field fails every client that listed the old release.

and prints one line per (tool, field, reason) with the calls, client versions and an example
trace behind it. What a shape cannot decide is listed as undecided. Exit status 0 when nothing
would fail, 1 when something would, 2 when an argument or the trace store cannot be used.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal, cast

from mcpobs._cli import CommandError
from mcpobs._cli import contract_diff as _diff
from mcpobs._cli.corpus import EXAMPLES, Corpus, Shape, from_file, from_jaeger
from mcpobs._cli.corpus import write as write_corpus
from mcpobs._cli.render import printable
from mcpobs._cli.schemas import check_arguments, walk
from mcpobs._cli.stores.jaeger import Jaeger

_JAEGER_FIX = "Give --jaeger the query address (e.g. http://127.0.0.1:16686), or read a file with --from."
_CLIENTS_SHOWN = 10


def parse_since(text: str) -> timedelta:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*", text)
    if not match:
        raise CommandError(f"--since {text!r}: give a duration such as 30m, 6h or 7d")
    amount, unit = float(match[1]), match[2]
    return timedelta(seconds=amount * {"s": 1, "m": 60, "h": 3600, "d": 86400}[unit])


Judgement = Literal["fail", "undecided", "noted", "accepted"]
"""A finding's verdict: `fail` (accepted today, rejected by the candidate: breaking), `undecided`,
`noted` (rejected today and by the candidate: the callers' mistake, not the candidate's) and
`accepted` (rejected today, accepted by the candidate)."""


@dataclass(frozen=True)
class Finding:
    kind: Judgement
    tool: str
    field: str
    reason: str


@dataclass
class _Line:
    calls: int = 0
    clients: set[str] = field(default_factory=set[str])
    traces: list[str] = field(default_factory=list[str])

    @property
    def trace_id(self) -> str | None:
        return self.traces[0] if self.traces else None


@dataclass
class Tally:
    """Calls by what the running release did with them and what the candidate would do."""

    both: int = 0
    """Accepted today and by the candidate."""
    broken: int = 0
    """Accepted today, rejected by the candidate: what fails the gate."""
    neither: int = 0
    """Rejected today and by the candidate: the callers' own mistakes."""
    newly: int = 0
    """Rejected today, accepted by the candidate."""
    by_schema: int = 0
    """Shapes recorded without their outcome, judged by the schema they were recorded with."""
    assumed: int = 0
    """Shapes recorded without their outcome or schema, taken as accepted today."""


@dataclass
class Replay:
    findings: dict[Finding, _Line] = field(default_factory=dict[Finding, _Line])
    tally: Tally = field(default_factory=Tally)

    def note(self, finding: Finding, calls: int, clients: Iterable[str], traces: Iterable[str | None]) -> None:
        line = self.findings.get(finding)
        if line is None:
            line = self.findings[finding] = _Line()
        line.calls += calls
        line.clients.update(clients)
        for trace in traces:
            if trace and len(line.traces) < EXAMPLES and trace not in line.traces:
                line.traces.append(trace)


def _today(shape: Shape, recorded: Any, result: Replay) -> bool:
    """Whether the running release accepted this shape's calls: from their recorded outcomes; for a
    recording without them (an older mcpobs), from the input schema they were recorded with; failing
    that, assumed (every finding about them then fails). The summary counts both fallbacks."""
    if shape.today is not None:
        return shape.today == "accepted"
    if recorded is not None and shape.definition is not None:
        result.tally.by_schema += 1
        return not any(kind == "fail" for kind, _, _ in check_arguments(shape.definition, recorded, recorded))
    result.tally.assumed += 1
    return True


def replay(corpus: Corpus, candidate: Mapping[str, Any]) -> dict[Finding, _Line]:
    """Every finding, with the calls, clients and example traces behind it."""
    return judge(corpus, candidate).findings


def judge(corpus: Corpus, candidate: Mapping[str, Any]) -> Replay:
    """The candidate judged call by call against what the running release did with the same calls.

    A call the running release accepted and the candidate would reject fails the gate; one both reject
    is the caller's mistake, noted; one only the candidate accepts is noted as newly accepted. Counts,
    clients and example traces of a failure are those of calls that succeeded today."""
    tools = {t["name"]: t for t in cast(Iterable[Mapping[str, Any]], candidate.get("tools") or ())}
    result = Replay()
    accepted_by: dict[tuple[str, str], list[Shape]] = {}
    inputs = [s for s in corpus.shapes.values() if s.direction == "input"]
    for shape in inputs:
        recorded_schemas: Mapping[str, Any] = corpus.schemas.get(shape.fingerprint) or {}
        recorded = recorded_schemas.get("input")
        today = _today(shape, recorded, result)
        if today:
            accepted_by.setdefault((shape.tool, shape.fingerprint), []).append(shape)
            calls, clients = shape.accepted_calls, shape.accepted_clients or shape.clients
            traces: list[str | None] = [*shape.accepted_traces] if shape.today else [shape.trace_id]
        else:
            calls, clients, traces = shape.calls, shape.clients, [shape.trace_id]
        tool = tools.get(shape.tool)
        if tool is None:
            found = [("fail", "(tool)", "removed from the candidate; callers call it")]
        elif shape.definition is None:
            found = [
                (
                    "undecided",
                    "(arguments)",
                    "a shape whose definition is not in the window (widen --since; or it was longer than the server's max_attribute_length)",
                )
            ]
        else:
            found = list(check_arguments(shape.definition, tool.get("inputSchema"), recorded))
        if today:
            result.tally.broken += calls if any(kind == "fail" for kind, _, _ in found) else 0
            result.tally.both += 0 if any(kind == "fail" for kind, _, _ in found) else calls
            for kind, where, reason in found:
                result.note(Finding(cast(Judgement, kind), shape.tool, where, reason), calls, clients, traces)
        elif found or (tool is not None and tool.get("inputSchema") == recorded):
            # Rejected today and by the candidate (or by the same schema, for a reason a shape does not hold).
            result.tally.neither += calls
            for _, where, reason in found or [("", "(arguments)", "refused by the same input schema")]:
                result.note(Finding("noted", shape.tool, where, f"{reason}; refused today too"), calls, clients, traces)
        else:
            result.tally.newly += calls
            result.note(
                Finding("accepted", shape.tool, "(arguments)", "refused today, accepted by the candidate"),
                calls,
                clients,
                traces,
            )

    called = {(s.tool, s.fingerprint) for s in corpus.shapes.values()}
    for name, fingerprint in sorted(called):
        tool = tools.get(name)
        shapes = accepted_by.get((name, fingerprint))
        if shapes is None and any(s.tool == name and s.fingerprint == fingerprint for s in inputs):
            continue  # every call with this schema was refused: no client validated a result of it
        if shapes is None:
            calls, clients, trace = corpus.calls(name, fingerprint)
            traces = [trace]
        else:
            calls = sum(s.accepted_calls for s in shapes)
            clients = set[str]().union(*(s.accepted_clients or s.clients for s in shapes))
            traces = [t for s in shapes for t in (s.accepted_traces if s.today else [s.trace_id])]
        if tool is None:
            if not any(s.tool == name for s in inputs):
                result.note(
                    Finding("fail", name, "(tool)", "removed from the candidate; callers call it"),
                    calls,
                    clients,
                    traces,
                )
            continue
        schemas = corpus.schemas.get(fingerprint)
        if schemas is None:
            result.note(
                Finding(
                    "undecided",
                    name,
                    "(output)",
                    f"schema {fingerprint} was not recorded in the window (widen --since, or raise the server's max_attribute_length): its clients' output schema is unknown",
                ),
                calls,
                clients,
                traces,
            )
            continue
        held, offered = schemas.get("output"), tool.get("outputSchema")
        if held is None:
            continue  # those clients validate no structured content
        if offered is None:
            result.note(
                Finding(
                    "fail", name, "(output)", "output schema removed; clients holding it expect structured content"
                ),
                calls,
                clients,
                traces,
            )
            continue
        for verdict, what in walk("output", "", held, offered, held, offered):
            if verdict == "breaking":
                where, _, reason = what.partition(": ")
                result.note(
                    Finding("fail", name, f"output {where}", f"{reason} (for clients holding schema {fingerprint})"),
                    calls,
                    clients,
                    traces,
                )
    return result


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
    if source is not None:
        corpus = from_file(source)
    else:
        store = Jaeger(cast(str, jaeger), _JAEGER_FIX, timeout=60)
        corpus = from_jaeger(store, cast(str, service), window, limit)
    if corpus_out:
        write_corpus(corpus, corpus_out)
    where = f"--from {source}" if source is not None else f"service {service} in Jaeger, last {since}"
    if not corpus.shapes:
        raise CommandError(
            f"no recorded tool-call shapes in {where}: shapes are recorded only where the servers turn them on "
            "(off by default: instrument(record_shapes=True), or OTEL_PYTHON_MCP_RECORD_SHAPES=true for zero-code); "
            "is it on, is the service name right, and did the window see calls? (tail sampling: docs/contract.md "
            "has the policy that keeps every shape)"
        )
    result = judge(corpus, wanted)
    findings = result.findings
    elapsed = time.perf_counter() - started
    order = {"fail": 0, "undecided": 1, "noted": 2, "accepted": 3}
    lines: list[str] = []
    for finding, line in sorted(
        findings.items(), key=lambda kv: (order[kv[0].kind], kv[0].tool, kv[0].field, kv[0].reason)
    ):
        clients = ", ".join(printable(c, 80) for c in sorted(line.clients)[:_CLIENTS_SHOWN])
        if len(line.clients) > _CLIENTS_SHOWN:
            clients += f" and {len(line.clients) - _CLIENTS_SHOWN} more"
        traces = ", ".join(printable(t, 64) for t in line.traces)
        example = f"; e.g. trace{'s' if len(line.traces) > 1 else ''} {traces}" if traces else ""
        lines.append(
            f"{finding.kind}: {printable(finding.tool, 120)}: {printable(finding.field)}: {printable(finding.reason, 400)} "
            f"({_plural(line.calls, 'call')}; clients {clients}{example})"
        )
    failures = sum(1 for f in findings if f.kind == "fail")
    undecided = sum(1 for f in findings if f.kind == "undecided")
    tools = {s.tool for s in corpus.shapes.values()}
    calls = sum(s.calls for s in corpus.shapes.values() if s.direction == "input")
    shapes = sum(1 for s in corpus.shapes.values() if s.direction == "input")
    fingerprints = len({(s.tool, s.fingerprint) for s in corpus.shapes.values()})
    summary = (
        f"replayed {_plural(shapes, 'argument shape')} and {_plural(fingerprints, 'schema fingerprint')} of "
        f"{_plural(len(tools), 'tool')} ({_plural(calls, 'call')}, {where}) against {candidate} in {elapsed:.2f}s: "
        f"{failures} would fail, {undecided} undecided"
    )
    lines.append(summary)
    tally = result.tally
    lines.append(
        f"calls the running release accepted: {tally.both} accepted by the candidate, {tally.broken} refused; "
        f"calls it refused (the callers' mistakes): {tally.neither} refused by the candidate too, {tally.newly} accepted"
    )
    if tally.by_schema:
        lines.append(
            f"note: {_plural(tally.by_schema, 'argument shape')} recorded without the call's outcome (an mcpobs "
            "older than this one): whether the running release accepted them is judged by the input schema "
            "they were recorded with"
        )
    if tally.assumed:
        lines.append(
            f"note: {_plural(tally.assumed, 'argument shape')} recorded without the call's outcome or its schema: "
            "taken as accepted today, so a candidate refusing them fails even where the running release refused "
            "them too (record with this mcpobs to tell)"
        )
    if failures:
        lines.append(
            "the candidate would reject calls the running release accepts: keep the old behaviour (the field "
            "optional, the enum member, the property allowed, the output field), or ship the change as a new tool "
            "and keep the old one through the catalog cache and client upgrade windows (docs/contract.md)"
        )
    elif undecided:
        lines.append("nothing would fail on what shapes can tell; check the undecided lines by hand or in a test")
    return "\n".join(lines), 1 if failures else 0


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
