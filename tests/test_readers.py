"""What `show` and `contract replay` read from outside, when it is not what they expect.

Jaeger's and Prometheus's answers come from a real HTTP server on loopback, files from real
files, and the command runs as `python -m mcpobs` runs it (`main`). Whatever the answer or the
file holds, the command prints a normal result, or one line on stderr and exits 2: never a
traceback. Peer text it prints has its control characters escaped and is bounded.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpobs import semconv as S
from mcpobs.__main__ import main
from mcpobs._core.contract import schema_fingerprint

Body = bytes | Callable[[], Iterable[bytes]]


@dataclass
class Ran:
    status: int
    out: str
    err: str

    def one_line(self, command: str) -> str:
        """The one stderr line of a command that could not use what it read (exit 2, nothing on stdout)."""
        assert self.status == 2 and self.out == "", (self.status, self.out, self.err)
        (line,) = self.err.splitlines()
        assert line.startswith(f"mcpobs {command}: "), line
        return line


def mcpobs(*argv: str) -> Ran:
    """`python -m mcpobs ARGV` in this process: an exception that escapes is a traceback, and fails the test."""
    out, err, path = io.StringIO(), io.StringIO(), list(sys.path)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(list(argv))
    finally:
        sys.path[:] = path  # `contract` puts the current directory on it
    return Ran(status, out.getvalue(), err.getvalue())


class Store:
    """A loopback HTTP server answering each path (without its query) with what a test sets."""

    def __init__(self) -> None:
        self.answers: dict[str, tuple[int, Body]] = {}
        store = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, body = store.answers.get(self.path.partition("?")[0], (404, b'{"error": "no such path"}'))
                self.send_response(status)
                if isinstance(body, bytes):
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                self.send_header("Connection", "close")
                self.end_headers()
                with contextlib.suppress(OSError):  # the reader hung up: it had read enough
                    for chunk in body():
                        self.wfile.write(chunk)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, path: str, body: Any, status: int = 200) -> None:
        self.answers[path] = (status, body if isinstance(body, bytes) or callable(body) else json.dumps(body).encode())


@pytest.fixture(scope="module")
def store() -> Iterator[Store]:
    served = Store()
    thread = threading.Thread(target=served.server.serve_forever, daemon=True)
    thread.start()
    yield served
    served.server.shutdown()
    served.server.server_close()


@pytest.fixture
def candidate(tmp_path: Path) -> str:
    """A snapshot file: the candidate release (`check_stock`, one string argument)."""
    path = tmp_path / "candidate.json"
    schema = {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]}
    path.write_text(json.dumps({"tools": [{"name": "check_stock", "inputSchema": schema}]}))
    return str(path)


def show(store: Store, *more: str) -> Ran:
    return mcpobs("show", "--service", "shop", "--jaeger", store.url, "--prometheus", store.url, *more)


def otlp(*spans: dict[str, Any], service: str = "shop") -> dict[str, Any]:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": list(spans)}]}]}


def tool_span(tool: str = "check_stock", **fields: Any) -> dict[str, Any]:
    """A server tools/call span carrying its argument shape, as an instrumented server exports it."""
    attributes = {
        S.GEN_AI_TOOL_NAME: tool,
        S.TOOL_SCHEMA_FINGERPRINT: "0123456789abcdef",
        S.TOOL_ARGUMENTS_SHAPE_ID: "fedcba9876543210",
        S.TOOL_ARGUMENTS_SHAPE_DEFINITION: json.dumps({"{}": {"sku": "string"}}),
        S.CLIENT_NAME: "support-host",
        S.CLIENT_VERSION: "1.0.0",
    }
    return {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": "eee19b7ec3c1b174",
        "name": f"tools/call {tool}",
        "kind": 2,
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000000001000000",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()],
        **fields,
    }


def jaeger_trace(**span_fields: Any) -> dict[str, Any]:
    """One trace as Jaeger's /api/traces answers it: a server span of a tool call."""
    span = {
        "traceID": "5b8efff798038103d269b633813fc60c",
        "spanID": "eee19b7ec3c1b174",
        "operationName": "tools/call check_stock",
        "references": [],
        "startTime": 1_700_000_000_000_000,
        "duration": 1200,
        "tags": [
            {"key": "span.kind", "type": "string", "value": "server"},
            {"key": S.GEN_AI_TOOL_NAME, "type": "string", "value": "check_stock"},
            {"key": S.OUTCOME, "type": "string", "value": "ok"},
        ],
        "processID": "p1",
        **span_fields,
    }
    return {"traceID": span["traceID"], "spans": [span], "processes": {"p1": {"serviceName": "shop"}}}


def quiet_prometheus(store: Store) -> None:
    store.answer("/api/v1/query", {"status": "success", "data": {"resultType": "vector", "result": []}})


# -- each input the issue names, which each made a traceback (or a wrong answer) before -----------


def test_a_file_whose_resource_spans_is_a_number(tmp_path: Path, candidate: str):
    path = tmp_path / "traces.json"
    path.write_text('{"resourceSpans": 5}\n')
    line = mcpobs("contract", "replay", candidate, "--from", str(path)).one_line("contract replay")
    assert f"--from {path}, line 1: resourceSpans is the number 5, expected a list" in line
    assert "one ExportTraceServiceRequest JSON per line" in line


def test_a_file_with_a_list_as_span_id(tmp_path: Path, candidate: str):
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(otlp(tool_span(spanId=[1]))) + "\n")
    line = mcpobs("contract", "replay", candidate, "--from", str(path)).one_line("contract replay")
    assert "line 1: resourceSpans[0].scopeSpans[0].spans[0].spanId is a list of 1, expected a string" in line


def test_a_file_nested_100000_deep(tmp_path: Path, candidate: str):
    path = tmp_path / "traces.json"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    line = mcpobs("contract", "replay", candidate, "--from", str(path)).one_line("contract replay")
    assert "line 1: JSON nested deeper than can be read" in line


def test_a_file_holding_a_document_written_over_several_lines_is_read(tmp_path: Path, candidate: str):
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(otlp(tool_span()), indent=2) + "\n")
    ran = mcpobs("contract", "replay", candidate, "--from", str(path))
    assert ran.status == 0 and "replayed 1 argument shape and" in ran.out, ran


def test_a_huge_file_is_read_a_line_at_a_time(tmp_path: Path, candidate: str):
    """200 MiB of spans (none a tool call's) in bounded memory: before, the whole file was read at once."""
    path = tmp_path / "traces.json"
    span = {"name": "GET /", "attributes": [{"key": "http.body", "value": {"stringValue": "x" * (1 << 20)}}]}
    line = (json.dumps(otlp(span)) + "\n").encode()
    with path.open("wb") as out:
        for _ in range(200):
            out.write(line)
    # VmHWM, not ru_maxrss: Linux carries the forking parent's peak across exec into ru_maxrss, so a child of a
    # pytest process grown to 480 MB in the whole suite "peaked" at 480 MB whatever it read (CI, c9c5c80).
    measure = (
        "import runpy, sys\n"
        "try:\n"
        "    runpy.run_module('mcpobs', run_name='__main__', alter_sys=True)\n"
        "finally:\n"
        "    hwm = next(l for l in open('/proc/self/status') if l.startswith('VmHWM:'))\n"
        "    print('peak', hwm.split()[1], file=sys.stderr)\n"
    )
    clean = {k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ}  # nothing earlier tests set
    done = subprocess.run(
        [sys.executable, "-c", measure, "contract", "replay", candidate, "--from", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=clean | {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
    )
    said, peak = done.stderr.splitlines()
    assert done.returncode == 2 and "no recorded tool-call shapes" in said, done.stderr
    # KiB. 78 MB here: the interpreter and one line; reading the whole file, as before, holds it twice (bytes and
    # text): over 460 MB.
    assert int(peak.split()[1]) < 300_000, peak


def test_no_shapes_says_they_are_off_by_default_and_how_to_turn_them_on(tmp_path: Path, candidate: str):
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(otlp({"name": "GET /"})) + "\n")
    line = mcpobs("contract", "replay", candidate, "--from", str(path)).one_line("contract replay")
    assert "(the default)" not in line  # it said so before; the corpus is off by default
    assert "off by default: instrument(record_shapes=True), or OTEL_PYTHON_MCP_RECORD_SHAPES=true" in line


def test_jaeger_answering_a_list(store: Store):
    store.answer("/api/traces", [1])
    line = show(store, "--no-metrics").one_line("show")
    assert f"Jaeger's query API at {store.url}, /api/traces: the answer is a list of 1, expected an object" in line
    assert f"is {store.url} Jaeger's query API?" in line


def test_jaeger_answering_data_5(store: Store):
    store.answer("/api/traces", {"data": 5})
    line = show(store, "--no-metrics").one_line("show")
    assert "/api/traces: data is the number 5, expected a list" in line


def test_jaeger_answering_a_start_time_as_text(store: Store):
    store.answer("/api/traces", {"data": [jaeger_trace(startTime="1.5")]})
    line = show(store, "--no-metrics").one_line("show")
    assert '/api/traces: data[0].spans[0].startTime is the text "1.5", expected a whole number' in line


def test_jaeger_answering_a_start_time_no_date_can_show(store: Store):
    store.answer("/api/traces", {"data": [jaeger_trace(startTime=10**30)]})
    line = show(store, "--no-metrics").one_line("show")
    assert "data[0].spans[0].startTime is the number 1000000000000000000000000000000, expected a whole number" in line


def test_jaeger_answering_traces_that_are_not_json(store: Store, candidate: str):
    store.answer("/api/traces", b"<html>a proxy's login page</html>")
    line = show(store, "--no-metrics").one_line("show")
    assert "/api/traces: not JSON (Expecting value: line 1 column 1 (char 0))" in line  # before: "nothing answers"
    store.answer("/api/v3/operations", {"operations": [{"name": "tools/call check_stock"}]})
    store.answer("/api/v3/traces", b"<html>a proxy's login page</html>")
    line = mcpobs("contract", "replay", candidate, "--jaeger", store.url, "--service", "shop").one_line(
        "contract replay"
    )
    assert f"Jaeger's query API at {store.url}, /api/v3/traces: not JSON" in line


def test_jaeger_answering_operations_that_are_not_json(store: Store, candidate: str):
    """Before, this was read as no operations, and said "no recorded tool-call shapes"."""
    store.answer("/api/v3/operations", b"Service Unavailable")
    line = mcpobs("contract", "replay", candidate, "--jaeger", store.url, "--service", "shop").one_line(
        "contract replay"
    )
    assert f"Jaeger's query API at {store.url}, /api/v3/operations: not JSON" in line


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ([1], "the answer is a list of 1, expected an object"),
        ({"operations": 5}, "operations is the number 5, expected a list"),
        ({"operations": [{"name": ["tools/call x"]}]}, "operations[0].name is a list of 1, expected a string"),
    ],
)
def test_jaeger_answering_operations_of_the_wrong_shape(store: Store, candidate: str, answer: Any, says: str):
    store.answer("/api/v3/operations", answer)
    line = mcpobs("contract", "replay", candidate, "--jaeger", store.url, "--service", "shop").one_line(
        "contract replay"
    )
    assert f"/api/v3/operations: {says}" in line


def test_jaeger_answering_trace_documents_of_the_wrong_shape(store: Store, candidate: str):
    store.answer("/api/v3/operations", {"operations": [{"name": "tools/call check_stock"}]})
    store.answer("/api/v3/traces", {"result": {"resourceSpans": [{"scopeSpans": {"spans": []}}]}})
    line = mcpobs("contract", "replay", candidate, "--jaeger", store.url, "--service", "shop").one_line(
        "contract replay"
    )
    assert "/api/v3/traces: result.resourceSpans[0].scopeSpans is an object, expected a list" in line


def test_jaeger_answering_more_than_can_be_held(store: Store, candidate: str):
    """An answer too long to hold (a misdirected stream, say) is cut where the reader stops reading.
    (Before, the whole answer was read: an endless one until the kernel killed the process at 22 GB.
    This one ends 16 MiB past the bound, so a reader that does not stop fails the test, not the machine.)"""
    from mcpobs._cli.stores.reading import MAX_BYTES

    store.answer("/api/v3/operations", {"operations": [{"name": "tools/call check_stock"}]})

    def endless() -> Iterator[bytes]:
        chunk = b" " * (1 << 20)
        for _ in range(MAX_BYTES // len(chunk) + 16):
            yield chunk

    store.answer("/api/v3/traces", endless)
    line = mcpobs("contract", "replay", candidate, "--jaeger", store.url, "--service", "shop").one_line(
        "contract replay"
    )
    assert f"answered /api/v3/traces with more than {MAX_BYTES // (1 << 20)} MiB" in line


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ({"status": "success", "data": 5}, "data is the number 5, expected an object"),
        ({"status": "success", "data": {"resultType": "matrix", "result": []}}, 'data.resultType is the text "matrix"'),
        (
            {"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": "x"}]}},
            'data.result[0].value is the text "x", expected a list',
        ),
        (
            {"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": [1, "many"]}]}},
            'data.result[0].value is a list of 2, expected [time, "value"]',
        ),
        (
            {
                "status": "success",
                "data": {"resultType": "vector", "result": [{"metric": {"job": 5}, "value": [1, "2"]}]},
            },
            "data.result[0].metric.job is the number 5, expected a string",
        ),
        ([], "the answer is a list of 0, expected an object"),
    ],
)
def test_prometheus_answering_the_wrong_shape(store: Store, answer: Any, says: str):
    store.answer("/api/traces", {"data": [jaeger_trace()]})
    store.answer("/api/v1/query", answer)
    line = show(store).one_line("show")
    assert f"Prometheus at {store.url}, /api/v1/query: {says}" in line and f"is {store.url} Prometheus?" in line


def test_prometheus_refusing_a_query_is_one_line(store: Store):
    store.answer("/api/traces", {"data": [jaeger_trace()]})
    store.answer("/api/v1/query", {"status": "error", "error": "parse error\n\x1b[2Jat char 5"})
    line = show(store).one_line("show")
    assert "refused" in line and "parse error\\n\\x1b[2Jat char 5" in line


# -- peer text on the terminal -------------------------------------------------------------------


def test_show_escapes_and_bounds_what_peers_wrote(store: Store):
    hostile = "evil\n2026-01-01 INFO mcpobs.session FORGED\x1b[2J\u202e"
    trace = jaeger_trace(operationName=f"tools/call {hostile}")
    trace["spans"][0]["tags"][1]["value"] = hostile + "x" * 200_000
    trace["processes"]["p1"]["serviceName"] = hostile
    store.answer("/api/traces", {"data": [trace]})
    store.answer(
        "/api/v1/query",
        {
            "status": "success",
            "data": {
                "resultType": "vector",
                "result": [{"metric": {S.prometheus_label(S.GEN_AI_TOOL_NAME): hostile}, "value": [1, "3"]}],
            },
        },
    )
    ran = show(store)
    assert ran.status == 0, ran
    assert "\x1b" not in ran.out and "\u202e" not in ran.out, ran.out
    assert "FORGED\\x1b[2J\\u202e" in ran.out and "evil\\n2026" in ran.out
    assert all(len(line) < 1000 for line in ran.out.splitlines()), max(len(line) for line in ran.out.splitlines())
    assert not any(line.startswith("2026-01-01") for line in ran.out.splitlines())  # no forged line


def test_show_draws_a_deep_trace_without_recursion(store: Store):
    spans = [jaeger_trace()["spans"][0] | {"spanID": f"{n:016x}"} for n in range(5000)]
    for n, span in enumerate(spans[1:]):
        span["references"] = [{"refType": "CHILD_OF", "traceID": span["traceID"], "spanID": f"{n:016x}"}]
    store.answer("/api/traces", {"data": [{"traceID": spans[0]["traceID"], "spans": spans, "processes": {}}]})
    ran = show(store, "--no-metrics")
    assert ran.status == 0 and ran.out.count("tools/call check_stock") == 5000, ran.err


def test_replay_escapes_what_peers_wrote(tmp_path: Path, candidate: str):
    path = tmp_path / "traces.json"
    span = tool_span(tool="gone\x1b[31m")
    span["attributes"].append({"key": S.CLIENT_NAME, "value": {"stringValue": "host\nfail: forged"}})
    path.write_text(json.dumps(otlp(span)) + "\n")
    ran = mcpobs("contract", "replay", candidate, "--from", str(path))
    assert ran.status == 1, ran
    assert "\x1b" not in ran.out and "fail: gone\\x1b[31m: (tool)" in ran.out
    assert not any(line.startswith("fail: forged") for line in ran.out.splitlines())


# -- generated answers and files -----------------------------------------------------------------

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
anything = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def weighted(usual: st.SearchStrategy[Any], rare: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`usual` nine times in ten (`one_of` picks each distinct branch alike, however often it is listed)."""
    return st.integers(1, 10).flatmap(lambda n: usual if n < 10 else rare)


def maybe(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly what the store writes there (nine times in ten), sometimes anything at all."""
    return weighted(valid, anything)


def some(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """An object with these fields (each maybe wrong, maybe missing), or anything at all."""
    present = st.fixed_dictionaries({k: st.tuples(st.integers(1, 10), maybe(v)) for k, v in fields.items()})
    return maybe(present.map(lambda drawn: {k: v for k, (n, v) in drawn.items() if n < 10}))


texts = st.text(max_size=20) | st.sampled_from(["tools/call check_stock", "\x1b[2J", "\ud800", "a\nb"])
schemas = st.recursive(
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(["string", "integer", "number", "object", "array", "boolean", "null"]) | anything,
            "enum": st.lists(scalars, max_size=3) | anything,
            "pattern": st.text(max_size=4),
            "required": st.lists(st.sampled_from(["sku", "unit", "x"])) | anything,
            "additionalProperties": st.booleans() | anything,
            "$ref": st.sampled_from(["#", "#/$defs/n", "#/properties/sku", "#/nope"]),
        },
    ),
    lambda inner: st.fixed_dictionaries(
        {},
        optional={
            "properties": st.dictionaries(st.sampled_from(["sku", "unit", "x"]), inner, max_size=3) | anything,
            "items": inner,
            "anyOf": st.lists(inner, max_size=2) | anything,
            "$defs": st.fixed_dictionaries({"n": inner}),
        },
    ),
    max_leaves=8,
)
shapes = st.recursive(
    st.sampled_from(["string", "integer", "number", "boolean", "null", "..."]) | st.fixed_dictionaries({"=": scalars}),
    lambda inner: (
        st.fixed_dictionaries({"{}": st.dictionaries(st.sampled_from(["sku", "unit", "x", "*", "..."]), inner)})
        | st.fixed_dictionaries({"[]": st.lists(inner, max_size=3)})
    ),
    max_leaves=8,
)


@st.composite
def tool_attributes(draw: st.DrawFn) -> list[Any]:
    """A tool call's attributes, each maybe wrong: the shapes, the schemas (with a fingerprint that matches)."""
    recorded_in, recorded_out = draw(schemas), draw(st.none() | schemas)
    values: dict[str, Any] = {
        S.GEN_AI_TOOL_NAME: draw(st.sampled_from(["check_stock", "gone"]) | texts),
        S.TOOL_SCHEMA_FINGERPRINT: schema_fingerprint(recorded_in, recorded_out),
        S.TOOL_SCHEMA_DEFINITION: json.dumps({"input": recorded_in, "output": recorded_out}),
        S.TOOL_ARGUMENTS_SHAPE_ID: draw(texts),
        S.TOOL_ARGUMENTS_SHAPE_DEFINITION: json.dumps(draw(shapes | anything)),
        S.TOOL_RESULT_SHAPE_ID: draw(texts),
        S.TOOL_ARGUMENTS_SHAPE_COUNT: draw(st.integers(0, 10**20).map(str) | st.integers()),
        S.TOOL_SHAPE_RECORDER: draw(texts),
        S.CLIENT_NAME: draw(texts),
        S.OUTCOME: draw(st.sampled_from(["ok", "tool_error"]) | texts),
    }
    kinds = {str: "stringValue", int: "intValue"}
    return [draw(maybe(st.just({"key": k, "value": {kinds[type(v)]: v}}))) for k, v in values.items()]


ids = st.sampled_from(["5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174", "W47/95gDgQPSabYzgT/GDA=="]) | texts
nanos = weighted(st.integers(0, 2**64).map(str), st.integers(-5, 2**65) | texts)
otlp_span = some(
    traceId=ids,
    spanId=ids,
    parentSpanId=ids,
    name=texts,
    kind=st.integers(-1, 6) | st.sampled_from(["SPAN_KIND_SERVER", "SERVER"]),
    startTimeUnixNano=nanos,
    endTimeUnixNano=nanos,
    attributes=tool_attributes(),
)
otlp_request = some(
    resourceSpans=st.lists(
        some(
            resource=some(attributes=st.just([{"key": "service.name", "value": {"stringValue": "shop"}}])),
            scopeSpans=st.lists(some(spans=st.lists(otlp_span, min_size=1, max_size=3)), min_size=1, max_size=2),
        ),
        min_size=1,
        max_size=2,
    )
)
jaeger_span = some(
    traceID=ids,
    spanID=ids,
    operationName=texts,
    references=st.lists(some(refType=weighted(st.just("CHILD_OF"), texts), spanID=ids), max_size=2),
    startTime=weighted(st.integers(0, 2 * 10**15), st.integers(-5, 10**19) | texts),
    duration=weighted(st.integers(0, 10**7), st.integers(-5, 10**19)),
    tags=st.lists(
        some(
            key=weighted(st.sampled_from(["span.kind", S.OUTCOME, S.GEN_AI_TOOL_NAME]), texts),
            value=weighted(texts | st.integers() | st.floats() | st.booleans(), scalars),
        ),
        max_size=4,
    ),
    processID=weighted(st.just("p1"), texts),
)
jaeger_traces = some(
    data=st.lists(
        some(
            traceID=ids, spans=st.lists(jaeger_span, min_size=1, max_size=3), processes=some(p1=some(serviceName=texts))
        ),
        min_size=1,
        max_size=3,
    )
)
prometheus_answer = some(
    status=weighted(st.just("success"), texts),
    error=texts,
    data=some(
        resultType=weighted(st.just("vector"), texts),
        result=st.lists(
            some(
                metric=st.dictionaries(st.sampled_from(["mcp_method_name", "gen_ai_tool_name", "job"]), texts),
                value=st.tuples(st.floats(), weighted(st.floats().map(str), texts)).map(list),
            ),
            max_size=3,
        ),
    ),
)


tools = st.fixed_dictionaries(
    {"name": st.just("check_stock") | texts}, optional={"inputSchema": schemas, "outputSchema": schemas}
)


def encoded(documents: st.SearchStrategy[Any], most: int = 1) -> st.SearchStrategy[bytes]:
    """JSON text of up to `most` generated documents (one per line), or bytes that are no JSON."""
    lines = st.lists(documents, min_size=1, max_size=most).map(lambda ds: "\n".join(json.dumps(d) for d in ds).encode())
    return weighted(lines, st.binary(max_size=40) | st.text(max_size=40).map(lambda t: t.encode()))


def normal_or_one_line(ran: Ran, command: str) -> None:
    if ran.status == 2:
        ran.one_line(command)
    else:
        assert ran.status in (0, 1) and ran.err == "", ran
        assert not any(c in ran.out for c in "\x1b\x07\r\x00\u202e"), ran.out
        assert all(len(line) < 2000 for line in ran.out.splitlines())


def test_generated_files_are_replayed_or_one_line(tmp_path: Path):
    path = tmp_path / "traces.json"

    @SETTINGS
    @given(
        body=encoded(otlp_request, 3),
        candidate=maybe(st.fixed_dictionaries({"tools": st.lists(tools, min_size=1, max_size=2)})),
    )
    def check(body: bytes, candidate: Any) -> None:
        snapshot = tmp_path / "candidate.json"
        snapshot.write_text(json.dumps(candidate))
        path.write_bytes(body)
        ran = mcpobs("contract", "replay", str(snapshot), "--from", str(path))
        normal_or_one_line(ran, "contract replay")

    check()


def test_generated_jaeger_and_prometheus_answers_are_shown_or_one_line(store: Store):
    @SETTINGS
    @given(
        traces=encoded(jaeger_traces), services=encoded(some(data=st.lists(texts))), metrics=encoded(prometheus_answer)
    )
    def check(traces: bytes, services: bytes, metrics: bytes) -> None:
        store.answer("/api/traces", traces)
        store.answer("/api/services", services)
        store.answer("/api/v1/query", metrics)
        normal_or_one_line(show(store), "show")

    check()


def test_generated_jaeger_answers_are_replayed_or_one_line(store: Store, candidate: str):
    operations = some(operations=st.lists(some(name=st.just("tools/call check_stock") | texts), min_size=1, max_size=2))

    @SETTINGS
    @given(
        operations=encoded(operations),
        traces=encoded(some(result=otlp_request) | otlp_request, 3),
        status=st.sampled_from([200, 200, 404, 500]),
    )
    def check(operations: bytes, traces: bytes, status: int) -> None:
        store.answer("/api/v3/operations", operations)
        store.answer("/api/v3/traces", traces, status)
        ran = mcpobs("contract", "replay", candidate, "--jaeger", store.url, "--service", "shop")
        normal_or_one_line(ran, "contract replay")

    check()
