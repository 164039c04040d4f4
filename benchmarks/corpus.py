"""What the tool-call corpus weighs: 10,000 calls of 20 argument shapes through an instrumented server.

    python benchmarks/corpus.py [--calls 10000] [--shapes 20]

Prints how many of the server spans carried a whole shape (the rest carry two 16-character ids),
the bytes those definitions and the schemas added, the entries the server's `ShapeBook` holds and
the memory they take (tracemalloc), the size of the OTLP JSON file the spans make and of the
corpus `contract replay` rebuilds from it, and the replay's wall time over that file (in
process: reading, rebuilding and checking, against a candidate that fails one field).
"""

from __future__ import annotations

import json
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from harness import cli
from harness.workers import test_helpers

test_helpers()  # corpus_release, tests/'s server of one tool in a few releases


def shapes(count: int) -> list[dict[str, Any]]:
    """`count` distinct argument shapes for corpus_release's check_stock (optional fields, enum members, nesting)."""
    found: list[dict[str, Any]] = []
    for unit in (None, "each", "box", "pallet"):
        for warehouse in (None, {"region": "north"}, {"region": "south", "bin": "b"}):
            for note in (None, "n"):
                args: dict[str, Any] = {"sku": "k"}
                if unit:
                    args["unit"] = unit
                if warehouse:
                    args["warehouse"] = warehouse
                if note:
                    args["note"] = note
                found.append(args)
    assert count <= len(found), f"at most {len(found)} shapes"
    return found[:count]


async def drive(calls: int, count: int) -> None:
    import corpus_release
    from mcp import Client

    server = corpus_release.release()
    arguments = shapes(count)
    async with Client(server) as client:
        for n in range(calls):
            await client.call_tool("check_stock", arguments[n % count])


def book_bytes(count: int) -> int:
    """Memory a server's book takes for these shapes (what tracemalloc sees allocated while filling one)."""
    import corpus_release

    from mcpobs._core import shapes as _shapes
    from mcpobs._core.contract import wire_tool

    tool = wire_tool(corpus_release.release()._tool_manager.get_tool("check_stock"))  # pyright: ignore[reportPrivateUsage]
    inputs, outputs = _shapes.plan(tool["inputSchema"]), _shapes.plan(tool["outputSchema"])
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    book = _shapes.ShapeBook()
    client = ("support-host", "2.0.0")
    for arguments in shapes(count):
        book.note(("check_stock", "0123456789abcdef", "input", *client), _shapes.shape(arguments, inputs), 0.0, True)
    book.note(
        ("check_stock", "0123456789abcdef", "output", *client),
        _shapes.shape({"sku": "k", "on_hand": 1}, outputs),
        0.0,
        True,
    )
    used = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert len(book) == count + 1
    return used


def main() -> None:
    parser = cli.parser(__doc__)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--shapes", type=int, default=20)
    args = parser.parse_args()

    import logging

    import anyio
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.trace import SpanKind

    import mcpobs
    from mcpobs import semconv as S
    from mcpobs._cli import contract_diff, contract_replay
    from mcpobs.testing import capture

    logging.disable(logging.WARNING)
    telemetry = capture(record_shapes=True)
    anyio.run(drive, args.calls, args.shapes)
    mcpobs.uninstrument()
    spans = [s for s in telemetry.spans() if s.kind is SpanKind.SERVER and s.name == "tools/call check_stock"]
    carrying = [s for s in spans if S.TOOL_SHAPE_RECORDER in s.attributes]
    keys = (
        S.TOOL_ARGUMENTS_SHAPE_DEFINITION,
        S.TOOL_RESULT_SHAPE_DEFINITION,
        S.TOOL_SCHEMA_DEFINITION,
        S.TOOL_SHAPE_RECORDER,
        S.TOOL_ARGUMENTS_SHAPE_COUNT,
        S.TOOL_RESULT_SHAPE_COUNT,
    )
    definition_bytes = sum(len(str(s.attributes.get(k, ""))) for s in carrying for k in keys)
    id_bytes = sum(
        len(str(s.attributes.get(k, ""))) for s in spans for k in (S.TOOL_ARGUMENTS_SHAPE_ID, S.TOOL_RESULT_SHAPE_ID)
    )
    print(f"{args.calls} calls of {args.shapes} argument shapes (one result shape), one client")
    print(f"  server spans: {len(spans)}; carrying a whole shape: {len(carrying)} ({len(carrying) / len(spans):.2%})")
    print(f"  bytes of ids on all spans: {id_bytes:,} ({id_bytes / len(spans):.0f} per call)")
    print(f"  bytes of definitions, counts and schemas: {definition_bytes:,}")
    print(
        f"  a ShapeBook holding these {args.shapes} argument shapes and the result shape: {book_bytes(args.shapes):,} bytes"
    )
    candidate = json.loads(contract_diff.main_snapshot("corpus_release:dropped_enum"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "traces.json"
        with path.open("w") as out:
            all_spans = telemetry.spans()
            for start in range(0, len(all_spans), 512):  # a collector's batches: one request per line
                out.write(json.dumps(MessageToDict(encode_spans(all_spans[start : start + 512]))) + "\n")
        began = time.perf_counter()
        corpus = contract_replay.from_file(str(path))
        findings = contract_replay.replay(corpus, candidate)
        elapsed = time.perf_counter() - began
        size = path.stat().st_size
    rebuilt = json.dumps(corpus.as_json())
    print(f"  OTLP JSON of every span (client and server): {size:,} bytes")
    print(f"  corpus rebuilt: {len(corpus.shapes)} shapes, {len(rebuilt):,} bytes as JSON")
    print(f"  replay from that file: {elapsed:.2f} s wall ({len(findings)} findings)")
    for finding, line in findings.items():
        print(f"    {finding.kind}: {finding.tool}: {finding.field}: {finding.reason} ({line.calls} calls)")


if __name__ == "__main__":
    main()
