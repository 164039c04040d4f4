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
from typing import Any, cast

from mcpobs._cli import CommandError
from mcpobs._cli import contract_diff as _diff
from mcpobs._cli.corpus import Corpus, from_file, from_jaeger
from mcpobs._cli.corpus import write as write_corpus
from mcpobs._cli.render import printable
from mcpobs._cli.schemas import Kind, check_arguments, walk
from mcpobs._cli.stores.jaeger import Jaeger

_JAEGER_FIX = "Give --jaeger the query address (e.g. http://127.0.0.1:16686), or read a file with --from."
_CLIENTS_SHOWN = 10


def parse_since(text: str) -> timedelta:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*", text)
    if not match:
        raise CommandError(f"--since {text!r}: give a duration such as 30m, 6h or 7d")
    amount, unit = float(match[1]), match[2]
    return timedelta(seconds=amount * {"s": 1, "m": 60, "h": 3600, "d": 86400}[unit])


@dataclass(frozen=True)
class Finding:
    kind: Kind
    tool: str
    field: str
    reason: str


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
        for verdict, what in walk("output", "", held, offered, held, offered):
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
    findings = replay(corpus, wanted)
    elapsed = time.perf_counter() - started
    order = {"fail": 0, "undecided": 1}
    lines: list[str] = []
    for finding, line in sorted(
        found_items(findings), key=lambda kv: (order[kv[0].kind], kv[0].tool, kv[0].field, kv[0].reason)
    ):
        clients = ", ".join(printable(c, 80) for c in sorted(line.clients)[:_CLIENTS_SHOWN])
        if len(line.clients) > _CLIENTS_SHOWN:
            clients += f" and {len(line.clients) - _CLIENTS_SHOWN} more"
        example = f"; e.g. trace {printable(line.trace_id, 64)}" if line.trace_id else ""
        lines.append(
            f"{finding.kind}: {printable(finding.tool, 120)}: {printable(finding.field)}: {printable(finding.reason, 400)} "
            f"({line.calls} call{'s' if line.calls != 1 else ''}; clients {clients}{example})"
        )
    failures = sum(1 for f in findings if f.kind == "fail")
    undecided = len(findings) - failures
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
