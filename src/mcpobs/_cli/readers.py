"""What the command line reads from outside: Jaeger's query API, Prometheus's, and OTLP JSON files.

`show` and `contract replay` read the same stores: one fetch, one JSON loader, and one place
that turns a stored trace (Jaeger's own JSON from ``/api/traces``, OTLP JSON from
``/api/v3/traces`` or a collector's `file` exporter) into `render.Span` rows.

Jaeger v2's ``/api/v3/traces`` refuses a search without a time window (HTTP 400,
``query.start_time_min and query.start_time_max are required``) and one without a result
limit (HTTP 500, ``search depth must be greater than 0``): a bare ``?query.service_name=``
URL never works, so `traces_url` builds the whole query, ending a few minutes ahead of now so
a clock slightly ahead still finds the newest traces.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO, NoReturn, cast
from urllib.parse import urlencode

from mcpobs._cli import CommandError
from mcpobs._cli.render import Span, printable

DEFAULT_JAEGER = "127.0.0.1:16686"
"""Where `scripts/stack` (and `docker compose up`) serve Jaeger's query API."""
DEFAULT_PROMETHEUS = "127.0.0.1:9090"
"""Where `scripts/stack` serves Prometheus (``PROMETHEUS_LISTEN``)."""
PROMETHEUS_OTLP = "/api/v1/otlp/v1/metrics"
_TIMEOUT = 10.0


# -- where the stores are ----------------------------------------------------------------------


def base_url(address: str) -> str:
    """``host:port`` or a URL, as a URL with no trailing slash."""
    address = address.strip().rstrip("/")
    return address if "://" in address else f"http://{address}"


def jaeger_base() -> str:
    """The Jaeger query address: ``JAEGER_QUERY_HTTP`` (as scripts/stack reads it), else the default."""
    return base_url(os.environ.get("JAEGER_QUERY_HTTP", "").strip() or DEFAULT_JAEGER)


def prometheus_base(env: Mapping[str, str]) -> str:
    """Prometheus's address: from the metrics endpoint scripts/stack prints, else PROMETHEUS_LISTEN, else its default."""
    from opentelemetry.sdk.environment_variables import OTEL_EXPORTER_OTLP_METRICS_ENDPOINT

    endpoint = env.get(OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, "").strip()
    if endpoint.endswith(PROMETHEUS_OTLP):
        return endpoint.removesuffix(PROMETHEUS_OTLP)
    return base_url(env.get("PROMETHEUS_LISTEN", "").strip() or DEFAULT_PROMETHEUS)


def service_name() -> str:
    """The service.name the SDK would give spans here (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES).

    Raises `CommandError` when neither names one: a URL for `unknown_service` finds nothing useful.
    """
    from opentelemetry.sdk.resources import Resource

    try:
        name = Resource.create().attributes.get("service.name")
    except Exception:  # a malformed OTEL_RESOURCE_ATTRIBUTES, say
        name = None
    if not isinstance(name, str) or not name or name.startswith("unknown_service"):
        raise CommandError(
            "no service name: pass --service NAME, or set OTEL_SERVICE_NAME to the service.name your spans carry"
        )
    return name


def traces_url(
    service: str,
    operation: str | None = None,
    *,
    base: str | None = None,
    minutes: float = 60,
    limit: int = 20,
    now: datetime | None = None,
) -> str:
    """The `/api/v3/traces` URL for a service's traces of the last `minutes` (at most `limit`)."""
    end = (now or datetime.now(UTC)) + timedelta(minutes=5)
    start = end - timedelta(minutes=minutes + 5)
    params = {"query.service_name": service}
    if operation:
        params["query.operation_name"] = operation
    params["query.start_time_min"] = _rfc3339(start)
    params["query.start_time_max"] = _rfc3339(end)
    params["query.num_traces"] = str(limit)
    return f"{(base or jaeger_base()).rstrip('/')}/api/v3/traces?{urlencode(params)}"


def _rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- one answer or file, read with care --------------------------------------------------------

MAX_BYTES = 256 * 1024 * 1024
"""The most read of one answer, or of one line of a file (one ExportTraceServiceRequest)."""
MAX_DEPTH = 128
"""How deeply JSON written into an attribute (a shape, a schema) may nest; deeper is none mcpobs wrote."""
_MAX_TIME_US = 253_402_214_400_000_000
"""The last day of the year 9999 began: a later start time is no time (and no date can show it)."""
_MAX_INT64 = 2**63 - 1
_MIB = 1024 * 1024
_SPACE = re.compile(r"\s*")
_WHOLE = re.compile(r"-?\d{1,19}")
_DECODER = json.JSONDecoder()
Place = tuple[str | int, ...]


class Reading:
    """One answer or file being read. Anything in it that is not what was expected is one
    `CommandError` line: the source, the place in it, what is there, and what to do."""

    __slots__ = ("fix", "source")

    def __init__(self, source: str, fix: str) -> None:
        self.source = source
        self.fix = fix

    def fail(self, problem: str) -> NoReturn:
        raise CommandError(f"{self.source}: {problem}; {self.fix}")

    def expected(self, place: Place, value: Any, what: str) -> NoReturn:
        self.fail(f"{_place(place)} is {describe(value)}, expected {what}")

    def object(self, value: Any, place: Place) -> dict[str, Any]:
        if type(value) is not dict:
            self.expected(place, value, "an object")
        return cast(dict[str, Any], value)

    def array(self, value: Any, place: Place) -> list[Any]:
        """A list; none (absent or null) is an empty one."""
        if type(value) is list:
            return cast(list[Any], value)
        if value is None:
            return []
        self.expected(place, value, "a list")

    def objects(self, value: Any, place: Place) -> Iterator[tuple[int, dict[str, Any]]]:
        for index, item in enumerate(self.array(value, place)):
            if type(item) is not dict:
                self.expected((*place, index), item, "an object")
            yield index, cast(dict[str, Any], item)

    def text(self, value: Any, place: Place, default: str = "") -> str:
        if type(value) is str:
            return value
        if value is None:
            return default
        self.expected(place, value, "a string")

    def whole(self, value: Any, place: Place, low: int, high: int, *, quoted: bool = False) -> int:
        """A whole number in [low, high]; with `quoted`, also one written as a string (OTLP JSON's int64)."""
        if type(value) is int:
            number = value
        elif quoted and type(value) is str and _WHOLE.fullmatch(value):
            number = int(value)
        elif value is None:
            return low
        else:
            self.expected(place, value, "a whole number")
        if not low <= number <= high:
            self.expected(place, value, f"a whole number from {low} to {high}")
        return number

    def json(self, data: bytes) -> Any:
        """The one JSON document `data` holds."""
        try:
            return json.loads(data)
        except RecursionError:
            self.fail("JSON nested deeper than can be read")
        except ValueError as exc:
            self.fail(f"not JSON ({printable(exc, 120)})")

    def documents(self, text: str) -> Iterator[Any]:
        """JSON documents one after another (one per line, as the file exporter writes them, or concatenated)."""
        position, end = 0, len(text)
        while True:
            position = _SPACE.match(text, position).end()  # pyright: ignore[reportOptionalMemberAccess]
            if position >= end:
                return
            try:
                document, position = _DECODER.raw_decode(text, position)
            except RecursionError:
                self.fail("JSON nested deeper than can be read")
            except ValueError as exc:
                self.fail(f"not JSON ({printable(exc, 120)})")
            yield document


def describe(value: Any) -> str:
    """What a JSON value is, in a few words a terminal can show."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"the number {printable(value, 40)}"
    if isinstance(value, str):
        return f'the text "{printable(value, 40)}"'
    if isinstance(value, list):
        return f"a list of {len(cast(list[Any], value))}"
    return "an object"


def _place(place: Place) -> str:
    text = ""
    for part in place:
        text += f"[{part}]" if isinstance(part, int) else f".{printable(part, 60)}" if text else printable(part, 60)
    return text or "the answer"


def loads(text: str) -> Any:
    """JSON written into an attribute (a shape, a schema), or None when it is not JSON or nests
    deeper than `MAX_DEPTH`: what reads it walks it, so its depth is bounded here."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if _within(value, MAX_DEPTH) else None


def _within(value: Any, depth: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, level = stack.pop()
        if level > depth:
            return False
        if type(node) is dict:
            stack.extend((child, level + 1) for child in cast(dict[str, Any], node).values())
        elif type(node) is list:
            stack.extend((child, level + 1) for child in cast(list[Any], node))
    return True


# -- spans -------------------------------------------------------------------------------------


def jaeger_answer(answer: Any, reading: Reading | None = None) -> list[tuple[str, list[Span]]]:
    """Jaeger's ``/api/traces`` answer (its own JSON) as (trace id, spans)."""
    reading = reading or Reading("Jaeger's /api/traces answer", "is it Jaeger's query API?")
    found: list[tuple[str, list[Span]]] = []
    for i, trace in reading.objects(reading.object(answer, ()).get("data"), ("data",)):
        at: Place = ("data", i)
        processes: dict[str, str] = {}
        for key, process in reading.object(trace.get("processes") or {}, (*at, "processes")).items():
            here = (*at, "processes", key)
            processes[key] = reading.text(reading.object(process, here).get("serviceName"), (*here, "serviceName"))
        spans: list[Span] = []
        for j, span in reading.objects(trace.get("spans"), (*at, "spans")):
            here = (*at, "spans", j)
            tags: dict[str, Any] = {}
            for k, tag in reading.objects(span.get("tags"), (*here, "tags")):
                if "key" in tag:
                    key = reading.text(tag["key"], (*here, "tags", k, "key"))
                    tags[key] = _scalar(reading, tag.get("value"), (*here, "tags", k, "value"))
            references = list(reading.objects(span.get("references"), (*here, "references")))
            parent = next((r for _, r in references if r.get("refType") == "CHILD_OF"), None)
            if parent is None and references:
                parent = references[0][1]
            spans.append(
                Span(
                    span_id=reading.text(span.get("spanID"), (*here, "spanID")),
                    parent_id=None if parent is None else reading.text(parent.get("spanID"), (*here, "references")),
                    name=reading.text(span.get("operationName"), (*here, "operationName")),
                    kind=str(tags.pop("span.kind", "internal")).upper(),
                    start_ns=reading.whole(span.get("startTime"), (*here, "startTime"), 0, _MAX_TIME_US) * 1000,
                    duration_ns=reading.whole(span.get("duration"), (*here, "duration"), 0, _MAX_INT64 // 1000) * 1000,
                    attributes=tags,
                    service=processes.get(reading.text(span.get("processID"), (*here, "processID")), ""),
                    trace_id=reading.text(trace.get("traceID"), (*at, "traceID")),
                )
            )
        found.append((reading.text(trace.get("traceID"), (*at, "traceID")), spans))
    return found


def _scalar(reading: Reading, value: Any, place: Place) -> str | int | float | bool:
    if type(value) in (str, int, float, bool):
        return cast(str | int | float | bool, value)
    reading.expected(place, value, "a string, number or boolean")


_KINDS = ("", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")


def otlp_spans(request: Any, reading: Reading, having: frozenset[str] = frozenset()) -> Iterator[Span]:
    """The spans of one ExportTraceServiceRequest in OTLP JSON (or Jaeger's `{"result": ...}` wrapping of
    one); with `having`, only those carrying one of these attributes (the others' attributes are not decoded)."""
    request = reading.object(request, ())
    root: Place = ()
    if "error" in request:
        error: Any = request["error"]
        message: Any = cast(dict[str, Any], error).get("message") if type(error) is dict else error
        reading.fail(f"an error instead of traces: {printable(message) if type(message) is str else describe(message)}")
    if "result" in request:
        root = ("result",)
        request = reading.object(request["result"], root)
    for i, resource in reading.objects(request.get("resourceSpans"), (*root, "resourceSpans")):
        at: Place = (*root, "resourceSpans", i)
        service = ""
        described = resource.get("resource")
        if described is not None:
            here = (*at, "resource")
            for k, pair in reading.objects(reading.object(described, here).get("attributes"), (*here, "attributes")):
                if pair.get("key") == "service.name":
                    service = str(_any_value(reading, pair.get("value"), (*here, "attributes", k, "value")) or "")
        for j, scope in reading.objects(resource.get("scopeSpans"), (*at, "scopeSpans")):
            for k, span in reading.objects(scope.get("spans"), (*at, "scopeSpans", j, "spans")):
                here = (*at, "scopeSpans", j, "spans", k)
                pairs = reading.array(span.get("attributes"), (*here, "attributes"))
                for n, pair in enumerate(pairs):
                    if type(pair) is not dict or type(cast(dict[str, Any], pair).get("key")) is not str:
                        reading.expected((*here, "attributes", n), pair, 'an object with a "key" string')
                if having and not any(pair["key"] in having for pair in pairs):
                    continue  # most spans: not what the caller reads
                start = reading.whole(
                    span.get("startTimeUnixNano"), (*here, "startTimeUnixNano"), 0, 2**64 - 1, quoted=True
                )
                end = reading.whole(span.get("endTimeUnixNano"), (*here, "endTimeUnixNano"), 0, 2**64 - 1, quoted=True)
                yield Span(
                    span_id=_id(reading.text(span.get("spanId"), (*here, "spanId")), 16),
                    parent_id=_id(reading.text(span.get("parentSpanId"), (*here, "parentSpanId")), 16) or None,
                    name=reading.text(span.get("name"), (*here, "name")),
                    kind=_kind(reading, span.get("kind"), (*here, "kind")),
                    start_ns=start,
                    duration_ns=max(0, end - start),
                    attributes={
                        pair["key"]: _any_value(reading, pair.get("value"), (*here, "attributes", n, "value"))
                        for n, pair in enumerate(pairs)
                    },
                    service=service,
                    trace_id=_id(reading.text(span.get("traceId"), (*here, "traceId")), 32),
                )


def _kind(reading: Reading, value: Any, place: Place) -> str:
    if value is None:
        return "INTERNAL"
    if type(value) is int and 0 <= value < len(_KINDS):
        return _KINDS[value] or "INTERNAL"
    if type(value) is str and value.removeprefix("SPAN_KIND_") in _KINDS[1:]:
        return value.removeprefix("SPAN_KIND_")
    if type(value) is str and value == "SPAN_KIND_UNSPECIFIED":
        return "INTERNAL"
    reading.expected(place, value, "a span kind (0 to 5, or SPAN_KIND_SERVER and the like)")


def _any_value(reading: Reading, value: Any, place: Place) -> Any:
    """An OTLP JSON AnyValue as a Python value (int64 travels as a string); arrays, maps and bytes are not read."""
    if value is None:
        return None
    value = reading.object(value, place)
    if "stringValue" in value:
        return reading.text(value["stringValue"], (*place, "stringValue"))
    if "boolValue" in value:
        if type(value["boolValue"]) is not bool:
            reading.expected((*place, "boolValue"), value["boolValue"], "true or false")
        return value["boolValue"]
    if "intValue" in value:
        return reading.whole(value["intValue"], (*place, "intValue"), -(2**63), _MAX_INT64, quoted=True)
    if "doubleValue" in value:
        number = value["doubleValue"]
        if type(number) in (int, float):
            return float(number)
        if number in ("NaN", "Infinity", "-Infinity"):
            return float(number)
        reading.expected((*place, "doubleValue"), number, "a number")
    return None


def integer(value: Any) -> int | None:
    """An int, or a string of digits as one; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit() and len(value) <= 19:
        return int(value)
    return None


def _id(raw: str, length: int) -> str:
    """A trace or span id as lowercase hex, whether it came as hex (Jaeger) or base64 (protobuf's JSON)."""
    if len(raw) == length and all(c in "0123456789abcdefABCDEF" for c in raw):
        return raw.lower()
    if not raw:
        return ""
    try:
        return base64.b64decode(raw, validate=True).hex()
    except (binascii.Error, ValueError):
        return raw


# -- the stores --------------------------------------------------------------------------------


class Store:
    """A query API over HTTP: Jaeger's or Prometheus's. `fix` says what to do when nothing answers there."""

    what = "a query API"

    def __init__(self, base: str, fix: str, timeout: float = _TIMEOUT) -> None:
        self.base = base_url(base)
        self.fix = fix
        self.timeout = timeout
        scheme = urllib.parse.urlsplit(self.base).scheme
        if scheme not in ("http", "https"):
            raise CommandError(f"{printable(base)} is not an http:// or https:// address of {self.what}")

    def get(self, endpoint: str, params: Mapping[str, str] | None = None, *, none_found: bool = False) -> bytes | None:
        """The body of a GET; None for a 404 when `none_found` (a search that found nothing)."""
        url = f"{self.base}{endpoint}" + (f"?{urllib.parse.urlencode(params)}" if params else "")
        try:
            status, body = fetch(url, self.timeout)
        except (OSError, ValueError) as error:  # ValueError: an address urllib cannot use
            reason = getattr(error, "reason", error)
            raise CommandError(
                f"nothing answers at {self.base} ({self.what}: {printable(reason)}). {self.fix}"
            ) from None
        if status == 404 and none_found:
            return None
        if not 200 <= status < 300:
            lines = body[:4096].decode(errors="replace").strip().splitlines()
            said = f": {printable(lines[0], 200)}" if lines else ""
            raise CommandError(f"{self.what} at {self.base} answered HTTP {status} to {endpoint}{said}")
        if len(body) > MAX_BYTES:
            raise CommandError(
                f"{self.what} at {self.base} answered {endpoint} with more than {MAX_BYTES // _MIB} MiB; "
                "ask for less (a shorter --since, a lower --limit)"
            )
        return body

    def reading(self, endpoint: str) -> Reading:
        return Reading(f"{self.what} at {self.base}, {endpoint}", f"is {self.base} {self.what}?")


class Jaeger(Store):
    what = "Jaeger's query API"

    def traces(self, params: Mapping[str, str]) -> list[tuple[str, list[Span]]]:
        """The traces a ``/api/traces`` search finds, as (trace id, spans)."""
        reading = self.reading("/api/traces")
        return jaeger_answer(reading.json(self.get("/api/traces", params) or b""), reading)

    def services(self) -> list[str]:
        """The services Jaeger holds traces of."""
        reading = self.reading("/api/services")
        answer = reading.object(reading.json(self.get("/api/services") or b""), ())
        return sorted(reading.text(s, ("data", i)) for i, s in enumerate(reading.array(answer.get("data"), ("data",))))

    def operations(self, service: str) -> list[str]:
        """The span names Jaeger holds for `service` (``/api/v3/operations``)."""
        reading = self.reading("/api/v3/operations")
        answer = reading.object(reading.json(self.get("/api/v3/operations", {"service": service}) or b""), ())
        return [
            reading.text(o.get("name"), ("operations", i, "name"))
            for i, o in reading.objects(answer.get("operations"), ("operations",))
        ]

    def otlp_spans(self, params: Mapping[str, str], having: frozenset[str] = frozenset()) -> Iterator[Span]:
        """The spans of the traces a ``/api/v3/traces`` search finds (none when it finds none)."""
        body = self.get("/api/v3/traces", params, none_found=True)
        if body is None:
            return
        reading = self.reading("/api/v3/traces")
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            reading.fail(f"not UTF-8 ({exc.reason} at byte {exc.start})")
        for document in reading.documents(text):
            yield from otlp_spans(document, reading, having)


class Prometheus(Store):
    what = "Prometheus"

    def vector(self, expr: str) -> list[dict[str, Any]]:
        """The samples of an instant query: each its labels (strings) and its value (a number as text)."""
        reading = self.reading("/api/v1/query")
        answer = reading.object(reading.json(self.get("/api/v1/query", {"query": expr}) or b""), ())
        if answer.get("status") != "success":
            error = answer.get("error")
            said = printable(error) if type(error) is str else describe(error)
            raise CommandError(f"Prometheus at {self.base} refused {printable(expr)!r}: {said}")
        data = reading.object(answer.get("data"), ("data",))
        if data.get("resultType") != "vector":
            reading.expected(("data", "resultType"), data.get("resultType"), '"vector"')
        samples: list[dict[str, Any]] = []
        for i, sample in reading.objects(data.get("result"), ("data", "result")):
            here = ("data", "result", i)
            labels = reading.object(sample.get("metric") or {}, (*here, "metric"))
            for name, label in labels.items():
                reading.text(label, (*here, "metric", name))
            pair = reading.array(sample.get("value"), (*here, "value"))
            if len(pair) != 2 or type(pair[1]) is not str or not _is_number(pair[1]):
                reading.expected((*here, "value"), pair, '[time, "value"]')
            samples.append({"metric": labels, "value": pair})
        return samples


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def fetch(url: str, timeout: float = _TIMEOUT) -> tuple[int, bytes]:
    """(HTTP status, body) of a GET, the body cut one byte past `MAX_BYTES`; `OSError` when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as error:
        return error.code, error.read(4096)


# -- OTLP JSON files ---------------------------------------------------------------------------

_FILE_FIX = "give what a collector's `file` exporter writes (one ExportTraceServiceRequest JSON per line)"


def file_spans(path: str, having: frozenset[str] = frozenset()) -> Iterator[Span]:
    """The spans of an OTLP JSON file (`--from`), read a line at a time: a file of any length, each line
    at most `MAX_BYTES` (a document written over several lines is read whole, up to that size)."""
    source = f"--from {path}"
    try:
        with Path(path).open("rb") as handle:
            yield from _lines(handle, source, having)
    except FileNotFoundError:
        raise CommandError(f"{source}: no such file (give the file a collector's `file` exporter writes)") from None
    except OSError as exc:  # opening it: reading is `_read`'s
        raise CommandError(f"{source}: cannot read it: {printable(exc)}") from None


def _lines(handle: BinaryIO, source: str, having: frozenset[str]) -> Iterator[Span]:
    number = 0
    while line := _read(handle.readline, source):
        number += 1
        reading = Reading(f"{source}, line {number}", _FILE_FIX)
        if len(line) > MAX_BYTES:
            reading.fail(f"longer than {MAX_BYTES // _MIB} MiB")
        text = _text(reading, line)
        if number == 1:
            try:
                documents = list(reading.documents(text))
            except CommandError:
                if not _incomplete(text):
                    raise
                yield from _whole_file(handle, source, having)  # one document written over several lines
                return
        else:
            documents = reading.documents(text)
        for document in documents:
            yield from otlp_spans(document, reading, having)


def _whole_file(handle: BinaryIO, source: str, having: frozenset[str]) -> Iterator[Span]:
    handle.seek(0)
    whole = _read(handle.read, source)
    reading = Reading(source, _FILE_FIX)
    if len(whole) > MAX_BYTES:
        reading.fail(f"a document written over several lines, longer than {MAX_BYTES // _MIB} MiB in all")
    for document in reading.documents(_text(reading, whole)):
        yield from otlp_spans(document, reading, having)


def _read(read: Callable[[int], bytes], source: str) -> bytes:
    try:
        return read(MAX_BYTES + 1)
    except OSError as exc:
        raise CommandError(f"{source}: cannot read it: {printable(exc)}") from None


def _text(reading: Reading, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        reading.fail(f"not UTF-8 ({exc.reason} at byte {exc.start})")


def _incomplete(line: str) -> bool:
    """Whether the line starts a JSON document it does not end (pretty-printed JSON)."""
    stripped = line.strip()
    try:
        _DECODER.raw_decode(stripped)
    except json.JSONDecodeError as exc:
        return exc.pos >= len(stripped)
    except (ValueError, RecursionError):
        return False
    return False
