"""What mcpobs adds to the observability bill: bytes per call on the wire, OTLP protobuf, in one run.

A backend bills by bytes ingested and stored, so this counts what an exporter would send. Each
configuration runs in a fresh process, in memory, in mode `auto` (`Client(server)`: direct
dispatch) and mode `legacy` (`Client(server, mode="legacy")`: the initialize handshake, JSON-RPC):

- `sdk`: the SDK's own spans, nothing else (it records no metrics);
- `mcpobs`: `instrument()`, what a user gets by default;
- `lean`: `instrument(omit_attributes=<every optional group>)` (`semconv.ATTRIBUTE_GROUPS`).

Each makes a trivial ok call (a tool echoing its argument) and a failing call (a tool raising)
`CALLS` times after a warm-up. Spans are captured in memory and encoded with the OTLP encoder
(`encode_spans`); bytes per call are the marginal bytes, (bytes of all calls - bytes of the
first) / (calls - 1), so the resource and the scope, written once per export batch, are not
charged to a call. The metric points are aggregated: what they cost does not grow with calls
but with the series one kind of call touches, once per export interval; they are counted as
one delta export of those series (`encode_metrics`, empty resource). Per attribute, the bytes of
its key and value as encoded on the span are listed, so each attribute's cost is visible.

    python benchmarks/wire_bytes.py                            # the tables (~15 s)
    python benchmarks/wire_bytes.py --write-docs --write-readme  # and docs/benchmarks.md, README's row
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from harness import cli
from harness.docs import save_json
from harness.markers import replace_between

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CONFIGS = ("sdk", "mcpobs", "lean")
MODES = ("auto", "legacy")
KINDS = ("ok", "fail")
CALLS = 11
GOAL = 1.5
"""mcpobs's bytes per ok call in mode legacy, at most this many times the SDK's (issue 42)."""
DOCS = ROOT / "docs" / "benchmarks.md"
README = ROOT / "README.md"
BEGIN, END = "<!-- wire-bytes:begin (benchmarks/wire_bytes.py --write-docs) -->", "<!-- wire-bytes:end -->"
README_BEGIN, README_END = (
    "<!-- wire-bytes-row:begin (benchmarks/wire_bytes.py --write-readme) -->",
    "<!-- wire-bytes-row:end -->",
)


def _lean() -> tuple[str, ...]:
    from mcpobs import semconv as S

    return tuple(S.ATTRIBUTE_GROUPS)


async def _measure(config: str, mode: str) -> dict[str, Any]:
    """One configuration, one mode, in this process (a fresh one: instrumentation is global)."""
    from mcp import Client
    from mcp.server.mcpserver import MCPServer
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.common._internal import _encode_attributes
    from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider, UpDownCounter
    from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    resource = Resource.get_empty()
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    trace.set_tracer_provider(tracer_provider)  # the SDK's own spans use the global provider
    delta = dict.fromkeys((Counter, Histogram, UpDownCounter), AggregationTemporality.DELTA)
    reader = InMemoryMetricReader(preferred_temporality=delta)  # type: ignore[arg-type]
    meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    if config != "sdk":
        import mcpobs

        lean = {"omit_attributes": _lean()} if config == "lean" else {}
        mcpobs.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider, **lean)

    server = MCPServer("bench", version="1.0.0")  # a release, as a deployed server states

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def crash(text: str) -> str:
        raise RuntimeError("the tool failed")

    def size(batch: Any) -> int:
        return len(encode_spans(batch).SerializeToString())

    out: dict[str, Any] = {}
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        for kind, tool in (("ok", "echo"), ("fail", "crash")):
            await client.call_tool(tool, {"text": "hi"})  # warm-up: the first listing, caches
            spans.clear()
            reader.collect()  # the warm-up's points, dropped (delta)
            per_call: list[list[Any]] = []
            for _ in range(CALLS):
                before = len(spans.get_finished_spans())
                await client.call_tool(tool, {"text": "hi"})
                per_call.append(list(spans.get_finished_spans()[before:]))
            every = [s for call in per_call for s in call]
            span_bytes = (size(every) - size(per_call[0])) / (CALLS - 1)
            points = reader.get_metrics_data()
            metric_bytes = len(encode_metrics(points).SerializeToString()) if points else 0  # type: ignore[arg-type]
            described = []
            for span in per_call[-1]:
                attributes = [
                    (kv.key, len(kv.SerializeToString()) + 2)  # + the field's tag and length on the span
                    for kv in _encode_attributes(span.attributes)  # type: ignore[arg-type]
                ]
                events = sum(
                    len(e.SerializeToString()) + 2
                    for e in encode_spans([span]).resource_spans[0].scope_spans[0].spans[0].events
                )
                described.append(
                    {"name": span.name, "kind": span.kind.name, "attributes": attributes, "event_bytes": events}
                )
            out[kind] = {
                "span_bytes": span_bytes,
                "spans": len(per_call[-1]),
                "metric_bytes": metric_bytes,
                "described": described,
            }
    return out


def _spawn(config: str, mode: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--worker", config, "--mode", mode], capture_output=True, text=True, timeout=300
    )
    if done.returncode != 0:
        raise RuntimeError(f"{config} ({mode}) failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run() -> dict[str, Any]:
    """Every configuration in every mode, each in its own process."""
    return {mode: {config: _spawn(config, mode) for config in CONFIGS} for mode in MODES}


def total(data: dict[str, Any], mode: str, config: str, kind: str) -> float:
    return data[mode][config][kind]["span_bytes"]


def ratio(data: dict[str, Any], mode: str, config: str, kind: str = "ok") -> float:
    return total(data, mode, config, kind) / total(data, mode, "sdk", kind)


def tables(data: dict[str, Any]) -> str:
    out = [
        "| spans per call (B, OTLP protobuf) | SDK | mcpobs | mcpobs / SDK | lean | lean / SDK |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for mode in MODES:
        for kind, label in (("ok", "an ok call"), ("fail", "a failing call (the tool raises)")):
            sdk, ours, lean = (total(data, mode, c, kind) for c in CONFIGS)
            out.append(
                f"| {label}, {mode} | {sdk:,.0f} | {ours:,.0f} | {ours / sdk:.2f}x | {lean:,.0f} | {lean / sdk:.2f}x |"
            )
    out += [
        "",
        "| metric points, one delta export of the series a call touches (B) | SDK | mcpobs | lean |",
        "|---|---:|---:|---:|",
    ]
    for mode in MODES:
        for kind in KINDS:
            cells = " | ".join(f"{data[mode][c][kind]['metric_bytes']:,}" for c in CONFIGS)
            out.append(f"| {kind}, {mode} | {cells} |")
    for mode in MODES:
        out += ["", f"Attributes of an ok call's spans, {mode} (bytes of key and value as encoded):", ""]
        out += ["| configuration | span | attribute | bytes |", "|---|---|---|---:|"]
        for config in CONFIGS:
            for span in data[mode][config]["ok"]["described"]:
                for key, n in span["attributes"]:
                    out.append(f"| {config} | {span['kind']} `{span['name']}` | `{key}` | {n} |")
    crash = max(
        (s["event_bytes"] for s in data["legacy"]["mcpobs"]["fail"]["described"]),
        default=0,
    )
    out += ["", f"The failing call's exception event (type and traceback frames): {crash:,} B on its span."]
    return "\n".join(out) + "\n"


def section(data: dict[str, Any]) -> str:
    return (
        "## Bytes on the wire (issue 42)\n\n"
        "`benchmarks/wire_bytes.py` encodes what each configuration exports for one trivial call with the OTLP\n"
        "protobuf encoder, in memory: `sdk` is the SDK's own spans, `mcpobs` is `instrument()`, `lean` is\n"
        "`instrument(omit_attributes=...)` with every optional group omitted (docs/configuration.md). Bytes per\n"
        "call are marginal (the resource and scope, once per export batch, are not charged to a call). Goal:\n"
        f"at most {GOAL}x the SDK's bytes for an ok call in mode legacy. Which attribute is on every span and\n"
        'why: docs/privacy.md, "What every call carries".\n\n'
        "```bash\npython benchmarks/wire_bytes.py --write-docs --write-readme\n```\n\n" + tables(data)
    )


def readme_row(data: dict[str, Any]) -> str:
    cells = " | ".join(
        f"{total(data, m, 'mcpobs', 'ok'):,.0f} B ({ratio(data, m, 'mcpobs'):.2f}x; lean {ratio(data, m, 'lean'):.2f}x)"
        for m in MODES
    )
    return (
        "| bytes per ok call on the wire (`wire_bytes.py`, OTLP spans) / the SDK's own spans | auto | legacy |\n"
        f"|---|---:|---:|\n| `instrument()` (lean: every optional attribute group omitted) | {cells} |\n"
    )


def main() -> None:
    parser = cli.parser(__doc__)
    parser.add_argument("--worker", choices=CONFIGS)
    parser.add_argument("--mode", choices=MODES, default="auto")
    parser.add_argument("--json", type=Path, help="write the raw numbers here")
    parser.add_argument("--write-docs", action="store_true", help="rewrite the section in docs/benchmarks.md")
    parser.add_argument("--write-readme", action="store_true", help="rewrite the bytes row of README's cost table")
    args = parser.parse_args()
    if args.worker:
        import anyio

        print(json.dumps(anyio.run(_measure, args.worker, args.mode)))
        return
    data = run()
    if args.json:
        save_json(args.json, data, indent=2)
    text = section(data)
    print(text)
    if args.write_docs:
        replace_between(DOCS, (BEGIN, END), text, append=True)
    if args.write_readme:
        replace_between(README, (README_BEGIN, README_END), readme_row(data))


if __name__ == "__main__":
    main()
