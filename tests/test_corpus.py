"""The tool-call corpus: value-free shapes of each tools/call, counted and bounded; and the replay against a candidate."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import corpus_release
import pytest
from corpus_release import SECRET_PREFIX, calls
from google.protobuf.json_format import MessageToDict
from mcp import Client
from mcp.server.mcpserver import MCPServer
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.trace import SpanKind

import mcpobs
from mcpobs import semconv as S
from mcpobs._cli.contract_replay import check_arguments
from mcpobs._core import shapes as _shapes
from mcpobs._core.shapes import ShapeBook
from mcpobs.testing import CapturedTelemetry, capture

pytestmark = pytest.mark.anyio
HERE = Path(__file__).parent


async def drive(server: MCPServer, client_version: str, arguments: list[dict[str, Any]]) -> None:
    from mcp_types import Implementation

    async with Client(server, client_info=Implementation(name="support-host", version=client_version)) as client:
        for args in arguments:
            await client.call_tool("check_stock", args)


def tool_spans(telemetry: CapturedTelemetry) -> list[Any]:
    return telemetry.spans_named("tools/call check_stock", SpanKind.SERVER)


def everything_exported(telemetry: CapturedTelemetry) -> str:
    """Every attribute value, event and status of every span, as one text."""
    parts: list[str] = []
    for span in telemetry.spans():
        parts.append(span.name)
        parts.extend(f"{k}={v}" for k, v in (span.attributes or {}).items())
        for event in span.events:
            parts.append(event.name)
            parts.extend(f"{k}={v}" for k, v in (event.attributes or {}).items())
        parts.append(str(span.status.description))
        parts.extend(f"{k}={v}" for k, v in span.resource.attributes.items())
    return "\n".join(parts)


@pytest.fixture
def telemetry():
    captured = capture(record_shapes=True)
    yield captured
    mcpobs.uninstrument()


async def test_shapes_say_which_keys_types_and_enum_members_and_no_value(telemetry):
    server = corpus_release.release()
    old, new = calls("1.0.0", 1), calls("2.0.0", 1)
    await drive(server, "1.0.0", old)
    await drive(server, "2.0.0", new)
    spans = tool_spans(telemetry)
    assert len(spans) == 5
    definitions = [json.loads(s.attributes[S.TOOL_ARGUMENTS_SHAPE_DEFINITION]) for s in spans]
    assert definitions[0] == {"{}": {"sku": "string"}}
    assert definitions[1] == {"{}": {"sku": "string", "unit": {"=": "each"}}}
    assert definitions[2] == {
        "{}": {"sku": "string", "unit": {"=": "pallet"}, "warehouse": {"{}": {"region": {"=": "north"}}}}
    }
    assert definitions[4] == {
        "{}": {
            "note": "string",
            "sku": "string",
            "unit": {"=": "box"},
            "warehouse": {"{}": {"bin": "string", "region": {"=": "south"}}},
        }
    }
    ids = {s.attributes[S.TOOL_ARGUMENTS_SHAPE_ID] for s in spans}
    assert len(ids) == 5  # each a distinct shape
    result = json.loads(spans[0].attributes[S.TOOL_RESULT_SHAPE_DEFINITION])
    assert result == {"{}": {"on_hand": "integer", "sku": "string"}}
    # The schemas travel once with the first definition, and hash to the fingerprint the span carries.
    schema = json.loads(spans[0].attributes[S.TOOL_SCHEMA_DEFINITION])
    from mcpobs._core.contract import schema_fingerprint

    assert schema_fingerprint(schema["input"], schema["output"]) == spans[0].attributes[S.TOOL_SCHEMA_FINGERPRINT]
    assert S.TOOL_SCHEMA_DEFINITION not in spans[1].attributes
    assert spans[0].attributes[S.TOOL_SHAPE_RECORDER] == spans[4].attributes[S.TOOL_SHAPE_RECORDER]


async def test_distinct_secret_argument_values_appear_nowhere_in_the_telemetry(telemetry):
    server = corpus_release.release()
    sent = calls("1.0.0", 3) + calls("2.0.0", 3)
    await drive(server, "2.0.0", sent)
    await drive(server, "2.0.0", [{"sku": "x", f"{SECRET_PREFIX}free-key": {"deep": f"{SECRET_PREFIX}deep"}}])
    text = everything_exported(telemetry)
    assert S.TOOL_ARGUMENTS_SHAPE_DEFINITION in text  # shapes were recorded...
    assert SECRET_PREFIX not in text  # ...and no value, nor an unlisted key, a caller sent
    last = tool_spans(telemetry)[-1]
    assert json.loads(last.attributes[S.TOOL_ARGUMENTS_SHAPE_DEFINITION]) == {
        "{}": {"*": [{"{}": {"*": ["string"]}}], "sku": "string"}
    }


async def test_with_content_capture_unlisted_keys_are_named_as_redact_leaves_them():
    def redact(value: Any) -> Any:
        return {k.replace("secret", "XXX"): v for k, v in value.items()} if isinstance(value, dict) else value

    telemetry = capture(record_shapes=True, capture_content=True, redact=redact)
    try:
        await drive(corpus_release.release(), "2.0.0", [{"sku": "a", "secret_extra": 1}])
    finally:
        mcpobs.uninstrument()
    (span,) = tool_spans(telemetry)
    assert json.loads(span.attributes[S.TOOL_ARGUMENTS_SHAPE_DEFINITION]) == {
        "{}": {"XXX_extra": "integer", "sku": "string"}
    }


async def test_a_shape_rides_again_with_its_count_at_powers_of_two(telemetry):
    await drive(corpus_release.release(), "1.0.0", [{"sku": "a"}] * 9)
    spans = tool_spans(telemetry)
    counts = [s.attributes.get(S.TOOL_ARGUMENTS_SHAPE_COUNT) for s in spans]
    assert counts == [1, 2, None, 4, None, None, None, 8, None]
    assert all(S.TOOL_ARGUMENTS_SHAPE_ID in s.attributes for s in spans)
    assert [S.TOOL_SHAPE_RECORDER in s.attributes for s in spans] == [c is not None for c in counts]


async def test_each_client_release_gets_its_own_entry(telemetry):
    server = corpus_release.release()
    await drive(server, "1.0.0", [{"sku": "a"}])
    await drive(server, "2.0.0", [{"sku": "a"}])
    first, second = tool_spans(telemetry)
    assert first.attributes[S.TOOL_ARGUMENTS_SHAPE_ID] == second.attributes[S.TOOL_ARGUMENTS_SHAPE_ID]
    assert second.attributes[S.TOOL_ARGUMENTS_SHAPE_COUNT] == 1  # counted for 2.0.0 apart from 1.0.0


async def test_the_book_is_bounded_per_tool_and_counts_what_it_evicts(telemetry, monkeypatch):
    monkeypatch.setattr(_shapes, "MAX_SHAPES_PER_TOOL", 3)
    arguments = [{"sku": "a", "unit": u} for u in ("each", "box", "pallet")] + [{"sku": "a"}]
    await drive(corpus_release.release(), "1.0.0", arguments)
    spans = tool_spans(telemetry)
    # Entries in order: in(each), out, in(box) | in(pallet) evicts in(each) | in() evicts out, and out
    # (seen again) evicts in(box). 3 kept, the oldest going first, each eviction counted.
    assert S.TOOL_SHAPES_EVICTED not in spans[1].attributes
    assert spans[2].attributes[S.TOOL_SHAPES_EVICTED] == 1
    assert spans[3].attributes[S.TOOL_SHAPES_EVICTED] == 3


def test_the_book_is_bounded_in_total(monkeypatch):
    monkeypatch.setattr(_shapes, "MAX_SHAPES", 4)
    book = ShapeBook()
    for n in range(10):
        book.note((f"tool{n % 3}", "fp", "input", None, None), ("{}", ((f"k{n}", "string"),)), 0.0, True)
    assert len(book) == 4 and book.evicted == 6


def test_unsampled_calls_are_counted_and_the_next_recorded_span_carries_the_shape():
    book = ShapeBook()
    key = ("t", "fp", "input", None, None)
    for _ in range(5):
        entry, report = book.note(key, "string", 0.0, False)
        assert not report
    entry, report = book.note(key, "string", 1.0, True)
    assert report and entry.count == 6
    _, again = book.note(key, "string", 2.0, True)
    assert not again  # next at 8
    _, later = book.note(key, "string", 2.0 + S.SHAPE_REPORT_INTERVAL, True)
    assert later  # the interval passed: the count rides again


async def test_shapes_are_off_by_default():
    telemetry = capture()
    try:
        await drive(corpus_release.release(), "1.0.0", [{"sku": "a"}])
    finally:
        mcpobs.uninstrument()
    (span,) = tool_spans(telemetry)
    assert not [k for k in span.attributes if "shape" in k]


def test_the_environment_turns_shapes_on_and_a_bad_value_says_how():
    from mcpobs._core.config import ConfigurationError, settings_from

    assert settings_from({}, {"OTEL_PYTHON_MCP_RECORD_SHAPES": "true"}).record_shapes
    assert not settings_from({"record_shapes": False}, {"OTEL_PYTHON_MCP_RECORD_SHAPES": "true"}).record_shapes
    with pytest.raises(ConfigurationError, match="use 'true' to record"):
        settings_from({}, {"OTEL_PYTHON_MCP_RECORD_SHAPES": "yes please"})


def test_deep_and_wide_values_stay_bounded():
    compiled = _shapes.plan(None)
    deep: Any = "leaf"
    for _ in range(50):
        deep = {"k": deep}
    rendered = json.dumps(_shapes.canonical(_shapes.shape(deep, compiled, free_keys=True)))
    assert rendered.count("{}") == _shapes.MAX_DEPTH and '"..."' in rendered
    wide = {f"k{n}": n for n in range(1000)}
    found = _shapes.canonical(_shapes.shape(wide, compiled, free_keys=True))
    assert len(found["{}"]) == _shapes.MAX_KEYS + 1
    long = [*range(10_000), "x"]
    assert _shapes.canonical(_shapes.shape(long, compiled)) == {"[]": ["integer"]}  # first MAX_ELEMENTS looked at


# -- the checks ---------------------------------------------------------------------------------


SCHEMA = {
    "type": "object",
    "properties": {
        "sku": {"type": "string"},
        "unit": {"enum": ["each", "box"], "type": "string"},
        "where": {"anyOf": [{"$ref": "#/$defs/W"}, {"type": "null"}]},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["sku"],
    "$defs": {"W": {"type": "object", "properties": {"region": {"type": "string"}}, "required": ["region"]}},
}


def findings(shape: Any, candidate: Any, recorded: Any = SCHEMA) -> set[tuple[str, str, str]]:
    return set(check_arguments(shape, candidate, recorded))


def test_checks_name_each_field_that_would_fail():
    shape = {
        "{}": {"sku": "string", "unit": {"=": "box"}, "where": {"{}": {"region": "string"}}, "tags": {"[]": ["string"]}}
    }
    assert findings(shape, SCHEMA) == set()
    narrowed = json.loads(json.dumps(SCHEMA))
    narrowed["properties"]["unit"]["enum"] = ["each"]
    assert findings(shape, narrowed) == {("fail", "unit", 'enum member "box" is gone; callers send it')}
    stricter = json.loads(json.dumps(SCHEMA))
    stricter["$defs"]["W"]["required"] = ["region", "zone"]
    stricter["$defs"]["W"]["properties"]["zone"] = {"type": "string"}
    assert findings(shape, stricter) == {("fail", "where.zone", "required by the candidate; callers omit it")}
    retyped = json.loads(json.dumps(SCHEMA))
    retyped["properties"]["tags"]["items"] = {"type": "integer"}
    assert findings(shape, retyped) == {("fail", "tags[]", "callers send string, the candidate accepts integer")}
    closed = json.loads(json.dumps(SCHEMA))
    del closed["properties"]["tags"]
    closed["additionalProperties"] = False
    assert findings(shape, closed) == {("fail", "tags", "callers send it; the candidate forbids additional properties")}
    del closed["additionalProperties"]
    (removed,) = findings(shape, closed)
    assert removed[:2] == ("fail", "tags")
    patterned = json.loads(json.dumps(SCHEMA))
    patterned["properties"]["sku"]["pattern"] = "^KG-"
    assert findings(shape, patterned) == {("undecided", "sku", 'pattern "^KG-" is new (values are not recorded)')}
    # A field callers do not send may change as it likes.
    assert findings({"{}": {"sku": "string"}}, narrowed) == set()


async def test_replay_from_an_otlp_json_file_gives_the_verdicts_and_exit_statuses(telemetry, tmp_path):
    server = corpus_release.release()
    await drive(server, "1.0.0", calls("1.0.0", 2))
    await drive(server, "2.0.0", calls("2.0.0", 2))
    request = encode_spans(telemetry.spans())
    otlp = tmp_path / "traces.json"
    otlp.write_text(json.dumps(MessageToDict(request)) + "\n")  # one ExportTraceServiceRequest per line

    async def replay(*args: str) -> subprocess.CompletedProcess[str]:
        """The command line in this process (in a thread: it runs its own event loop); the first run, and
        the one whose exit status the shell sees, in a real subprocess."""
        argv = ["contract", "replay", *args]
        if args[0] == "corpus_release:compatible" and args[-1].endswith("traces.json"):
            return subprocess.run(
                [sys.executable, "-m", "mcpobs", *argv],
                capture_output=True,
                text=True,
                cwd=HERE,
                env={**os.environ, "PYTHONPATH": str(HERE)},
                timeout=120,
            )
        out, err = io.StringIO(), io.StringIO()

        def run() -> int:
            from mcpobs.__main__ import main

            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                return main(argv)

        status = await anyio.to_thread.run_sync(run)
        return subprocess.CompletedProcess(argv, status, out.getvalue(), err.getvalue())

    expected = corpus_release.expected(2)
    ok = await replay("corpus_release:compatible", "--from", str(otlp))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "0 would fail" in ok.stdout
    wanted = {
        "required": f"fail: check_stock: unit: required by the candidate; callers omit it ({expected['required']} calls;",
        "dropped_enum": f'fail: check_stock: unit: enum member "pallet" is gone; callers send it ({expected["dropped_enum"]} calls;',
        "closed": f"fail: check_stock: note: callers send it; the candidate forbids additional properties ({expected['closed']} calls;",
    }
    for candidate, line in wanted.items():
        done = await replay(f"corpus_release:{candidate}", "--from", str(otlp))
        assert done.returncode == 1, done.stdout + done.stderr
        assert line in done.stdout, done.stdout
        assert "1 would fail" in done.stdout
    closed = (await replay("corpus_release:closed", "--from", str(otlp))).stdout
    assert "clients support-host/2.0.0; e.g. trace" in closed  # only the new release sends `note`
    missing = await replay("corpus_release:compatible", "--from", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    empty = tmp_path / "empty.json"
    empty.write_text("")
    nothing = await replay("corpus_release:compatible", "--from", str(empty))
    assert nothing.returncode == 2 and "no recorded tool-call shapes" in nothing.stderr
    neither = await replay("corpus_release:compatible")
    assert neither.returncode == 2 and "--jaeger URL --service NAME, or --from FILE" in neither.stderr


async def test_a_renamed_output_field_fails_for_the_clients_holding_the_old_schema(telemetry, tmp_path):
    from mcpobs._cli import contract_diff, contract_replay

    await drive(corpus_release.release(), "1.0.0", calls("1.0.0", 1))
    otlp = tmp_path / "traces.json"
    otlp.write_text(json.dumps(MessageToDict(encode_spans(telemetry.spans()))) + "\n")
    corpus = contract_replay.from_file(str(otlp))
    candidate = await contract_diff.snapshot("corpus_release:release")
    assert contract_replay.replay(corpus, candidate) == {}  # the release against its own traffic
    output = candidate["tools"][0]["outputSchema"]
    output["properties"]["count"] = output["properties"].pop("on_hand")
    output["required"] = ["sku", "count"]
    found = contract_replay.replay(corpus, candidate)
    fingerprint = tool_spans(telemetry)[0].attributes[S.TOOL_SCHEMA_FINGERPRINT]
    assert {(f.kind, f.field, f.reason) for f in found} == {
        ("fail", "output on_hand", f"removed (for clients holding schema {fingerprint})")
    }
    (line,) = found.values()
    assert line.calls == 3 and line.clients == {"support-host/1.0.0"}
    candidate["tools"] = []
    (gone,) = contract_replay.replay(corpus, candidate)
    assert (gone.kind, gone.field) == ("fail", "(tool)")


async def test_a_span_read_twice_is_counted_once(telemetry, tmp_path):
    from mcpobs._cli import contract_replay

    await drive(corpus_release.release(), "1.0.0", calls("1.0.0", 1))
    line = json.dumps(MessageToDict(encode_spans(telemetry.spans()))) + "\n"
    otlp = tmp_path / "traces.json"
    otlp.write_text(line + line)  # overlapping exports, or one trace found by two searches
    corpus = contract_replay.from_file(str(otlp))
    assert sum(s.calls for s in corpus.shapes.values() if s.direction == "input") == 3


def test_replay_arguments_a_user_can_get_wrong_say_what_to_do():
    from datetime import timedelta

    from mcpobs._cli import CommandError
    from mcpobs._cli.contract_replay import main_replay, parse_since

    assert parse_since("90m") == timedelta(minutes=90) and parse_since("7d") == timedelta(days=7)
    common = {"since": "24h", "limit": 10, "corpus_out": None}
    with pytest.raises(CommandError, match="give a duration such as 30m"):
        main_replay("x.json", jaeger="http://j", service="s", source=None, **{**common, "since": "a week"})
    with pytest.raises(CommandError, match="--jaeger needs --service NAME"):
        main_replay("x.json", jaeger="http://j", service=None, source=None, **common)
    with pytest.raises(CommandError, match="--jaeger URL --service NAME, or --from FILE"):
        main_replay("x.json", jaeger="http://j", service="s", source="f.json", **common)


async def test_a_definition_longer_than_max_attribute_length_is_left_out_not_cut():
    telemetry = capture(record_shapes=True, max_attribute_length=40)
    try:
        await drive(corpus_release.release(), "1.0.0", [{"sku": "a"}, {"sku": "a", "unit": "box"}])
    finally:
        mcpobs.uninstrument()
    short, long = tool_spans(telemetry)
    assert short.attributes[S.TOOL_ARGUMENTS_SHAPE_DEFINITION] == '{"{}":{"sku":"string"}}'
    assert S.TOOL_ARGUMENTS_SHAPE_DEFINITION not in long.attributes  # '{"{}":{"sku":"string","unit":{"=":"box"}}}'
    assert long.attributes[S.TOOL_ARGUMENTS_SHAPE_COUNT] == 1 and S.TOOL_ARGUMENTS_SHAPE_ID in long.attributes
    assert S.TOOL_SCHEMA_DEFINITION not in short.attributes
