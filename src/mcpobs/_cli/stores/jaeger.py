"""Jaeger's query API: where it is, the URL of a service's traces, and its answers as `render.Span` rows.

Jaeger v2's ``/api/v3/traces`` refuses a search without a time window (HTTP 400,
``query.start_time_min and query.start_time_max are required``) and one without a result
limit (HTTP 500, ``search depth must be greater than 0``): a bare ``?query.service_name=``
URL never works, so `traces_url` builds the whole query, ending a few minutes ahead of now so
a clock slightly ahead still finds the newest traces.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, cast
from urllib.parse import urlencode

from mcpobs._cli.render import Span
from mcpobs._cli.stores.otlp_json import otlp_spans
from mcpobs._cli.stores.query_api import Store, base_url
from mcpobs._cli.stores.reading import MAX_INT64, Place, Reading

DEFAULT_JAEGER = "127.0.0.1:16686"
"""Where `scripts/stack` (and `docker compose up`) serve Jaeger's query API."""
_MAX_TIME_US = 253_402_214_400_000_000
"""The last day of the year 9999 began: a later start time is no time (and no date can show it)."""


def jaeger_base() -> str:
    """The Jaeger query address: ``JAEGER_QUERY_HTTP`` (as scripts/stack reads it), else the default."""
    return base_url(os.environ.get("JAEGER_QUERY_HTTP", "").strip() or DEFAULT_JAEGER)


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
                    duration_ns=reading.whole(span.get("duration"), (*here, "duration"), 0, MAX_INT64 // 1000) * 1000,
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
        for document in reading.documents(reading.utf8(body)):
            yield from otlp_spans(document, reading, having)
