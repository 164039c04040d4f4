"""OTLP JSON traces as `render.Span` rows: what Jaeger's ``/api/v3/traces`` answers and a collector's
`file` exporter writes, one ExportTraceServiceRequest at a time."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from typing import Any, cast

from mcpobs._cli.render import Span, printable
from mcpobs._cli.stores.reading import MAX_INT64, Place, Reading, describe

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
        return reading.whole(value["intValue"], (*place, "intValue"), -(2**63), MAX_INT64, quoted=True)
    if "doubleValue" in value:
        number = value["doubleValue"]
        if type(number) in (int, float):
            return float(number)
        if number in ("NaN", "Infinity", "-Infinity"):
            return float(number)
        reading.expected((*place, "doubleValue"), number, "a number")
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
