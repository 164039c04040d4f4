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
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlencode

from mcpobs._cli import CommandError
from mcpobs._cli.render import Span

DEFAULT_JAEGER = "127.0.0.1:16686"
"""Where `scripts/stack` (and `docker compose up`) serve Jaeger's query API."""
DEFAULT_PROMETHEUS = "127.0.0.1:9090"
"""Where `scripts/stack` serves Prometheus (``PROMETHEUS_LISTEN``)."""
PROMETHEUS_OTLP = "/api/v1/otlp/v1/metrics"
_TIMEOUT = 10.0
_JAEGER_FIX = (
    "Start the backends with scripts/stack (or docker compose up), or pass --jaeger HOST:PORT "
    "(or set JAEGER_QUERY_HTTP) where Jaeger's query API listens."
)
_PROMETHEUS_FIX = (
    "Start the backends with scripts/stack (or docker compose up), pass --prometheus HOST:PORT, "
    "or --no-metrics for the traces alone."
)


# -- where the stores are ----------------------------------------------------------------------


def base_url(address: str) -> str:
    """``host:port`` or a URL, as a URL with no trailing slash."""
    address = address.strip().rstrip("/")
    return address if "://" in address else f"http://{address}"


def jaeger_base() -> str:
    """The Jaeger query address: ``JAEGER_QUERY_HTTP`` (as scripts/stack reads it), else the default."""
    address = os.environ.get("JAEGER_QUERY_HTTP", "").strip() or DEFAULT_JAEGER
    return address if "://" in address else f"http://{address}"


def prometheus_base(env: Mapping[str, str]) -> str:
    """Prometheus's address: from the metrics endpoint scripts/stack prints, else PROMETHEUS_LISTEN, else its default."""
    from opentelemetry.sdk.environment_variables import OTEL_EXPORTER_OTLP_METRICS_ENDPOINT

    endpoint = env.get(OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, "").strip()
    if endpoint.endswith(PROMETHEUS_OTLP):
        return endpoint.removesuffix(PROMETHEUS_OTLP)
    address = env.get("PROMETHEUS_LISTEN", "").strip() or DEFAULT_PROMETHEUS
    return address if "://" in address else f"http://{address}"


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


# -- fetching and loading ----------------------------------------------------------------------


def fetch(url: str, timeout: float = _TIMEOUT) -> tuple[int, bytes]:
    """(HTTP status, body) of a GET; `OSError` when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def loads(text: str) -> Any:
    """A JSON value, or None when `text` is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return None


def documents(text: str) -> Iterator[Any]:
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


def _get_json(url: str, what: str, fix: str) -> Any:
    """The JSON at `url`; a `CommandError` naming the address (not the whole query) when it cannot be had."""
    where = urllib.parse.urlsplit(url)
    address = f"{where.scheme}://{where.netloc}"
    try:
        status, body = fetch(url)
        if not 200 <= status < 300:
            lines = body.decode(errors="replace").strip().splitlines()
            raise CommandError(f"{what} at {address} answered HTTP {status}{': ' + lines[0][:200] if lines else ''}")
        return json.loads(body)
    except (OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        raise CommandError(f"nothing answers at {address} ({what}: {reason}). {fix}") from None


# -- spans -------------------------------------------------------------------------------------


def jaeger_spans(trace: Mapping[str, Any]) -> list[Span]:
    """One trace of Jaeger's ``/api/traces`` answer as spans."""
    processes: Mapping[str, Any] = trace.get("processes") or {}
    trace_id = str(trace.get("traceID"))
    found: list[Span] = []
    for span in trace.get("spans") or ():
        tags = {t["key"]: t.get("value") for t in span.get("tags") or () if "key" in t}
        parent = next(
            (r.get("spanID") for r in span.get("references") or () if r.get("refType") == "CHILD_OF"),
            None,
        )
        if parent is None and span.get("references"):
            parent = span["references"][0].get("spanID")
        process: Mapping[str, Any] = processes.get(str(span.get("processID")), {})
        found.append(
            Span(
                span_id=str(span.get("spanID")),
                parent_id=parent,
                name=str(span.get("operationName", "")),
                kind=str(tags.pop("span.kind", "internal")).upper(),
                start_ns=int(span.get("startTime", 0)) * 1000,
                duration_ns=int(span.get("duration", 0)) * 1000,
                attributes=tags,
                service=str(process.get("serviceName", "")),
                trace_id=trace_id,
            )
        )
    return found


def otlp_spans(request: Any, having: frozenset[str] = frozenset()) -> Iterator[Span]:
    """The spans of one ExportTraceServiceRequest in OTLP JSON (or Jaeger's `{"result": ...}` wrapping of one);
    with `having`, only those carrying one of these attributes (the rest are not decoded)."""
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
                if having and not any(a.get("key") in having for a in pairs):
                    continue  # most spans: not what the caller reads
                yield Span(
                    span_id=str(span.get("spanId")),
                    parent_id=None,
                    name="",
                    kind="",
                    start_ns=0,
                    duration_ns=0,
                    attributes={a["key"]: _otlp_value(a.get("value")) for a in pairs if isinstance(a.get("key"), str)},
                    trace_id=_trace_id(span.get("traceId")) or "",
                )


def _otlp_value(value: Any) -> Any:
    """An OTLP JSON AnyValue as a Python value (int64 travels as a string)."""
    if not isinstance(value, Mapping):
        return None
    value = cast(Mapping[str, Any], value)
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return integer(value["intValue"]) if not isinstance(value["intValue"], int) else value["intValue"]
    return None


def integer(value: Any) -> int | None:
    """An int, or a string of digits as one (OTLP JSON's int64); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
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


# -- Jaeger ------------------------------------------------------------------------------------


def jaeger_traces(base: str, params: Mapping[str, str]) -> list[tuple[str, list[Span]]]:
    """The traces a ``/api/traces`` search finds, as (trace id, spans)."""
    return jaeger_answer(
        _get_json(f"{base}/api/traces?{urllib.parse.urlencode(params)}", "Jaeger's query API", _JAEGER_FIX)
    )


def jaeger_answer(answer: Mapping[str, Any]) -> list[tuple[str, list[Span]]]:
    """Jaeger's ``/api/traces`` answer as (trace id, spans)."""
    return [(str(t.get("traceID")), jaeger_spans(t)) for t in answer.get("data") or ()]


def jaeger_services(base: str) -> list[str]:
    """The services Jaeger holds traces of."""
    answer = _get_json(f"{base}/api/services", "Jaeger's query API", _JAEGER_FIX)
    return sorted(str(s) for s in answer.get("data") or ())


def jaeger_operations(base: str, service: str, timeout: float) -> list[str]:
    """The span names Jaeger holds for `service` (``/api/v3/operations``)."""
    url = f"{base}/api/v3/operations?{urllib.parse.urlencode({'service': service})}"
    try:
        status, body = fetch(url, timeout)
    except OSError as exc:
        raise CommandError(
            f"cannot reach Jaeger's query API at {base} ({exc}): give --jaeger the query address "
            "(e.g. http://127.0.0.1:16686), or read a file with --from"
        ) from exc
    if status != 200:
        raise CommandError(f"Jaeger at {base} answered {status} to {url}: {body[:200]!r}")
    listed: list[Any] = cast(Mapping[str, Any], loads(body.decode("utf-8", "replace")) or {}).get("operations") or []
    return [
        cast(str, o.get("name")) for o in cast(Iterable[Mapping[str, Any]], listed) if isinstance(o.get("name"), str)
    ]


def jaeger_otlp_spans(
    base: str, params: Mapping[str, str], timeout: float, having: frozenset[str] = frozenset()
) -> Iterator[Span]:
    """The spans of the traces a ``/api/v3/traces`` search finds (none when it finds none)."""
    url = f"{base}/api/v3/traces?{urllib.parse.urlencode(params)}"
    try:
        status, body = fetch(url, timeout)
    except OSError as exc:
        raise CommandError(
            f"Jaeger at {base} stopped answering ({exc}); try again, or read a file with --from"
        ) from exc
    if status == 404:
        return  # no traces in the window
    if status != 200:
        raise CommandError(f"Jaeger at {base} answered {status} to a trace search: {body[:200]!r}")
    for document in documents(body.decode("utf-8", "replace")):
        yield from otlp_spans(document, having)


# -- Prometheus --------------------------------------------------------------------------------


def prometheus_vector(base: str, expr: str) -> list[dict[str, Any]]:
    """The result vector of an instant query."""
    url = f"{base}/api/v1/query?{urllib.parse.urlencode({'query': expr})}"
    answer = _get_json(url, "Prometheus", _PROMETHEUS_FIX)
    if answer.get("status") != "success":
        raise CommandError(f"Prometheus refused {expr!r}: {answer.get('error', answer)}")
    return answer["data"]["result"]


# -- OTLP JSON files ---------------------------------------------------------------------------


def file_spans(path: str, having: frozenset[str] = frozenset()) -> Iterator[Span]:
    """The spans of an OTLP JSON file (`--from`): what a collector's `file` exporter writes."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise CommandError(f"--from {path}: no such file (give the file a collector's `file` exporter writes)") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"--from {path}: cannot read it: {exc}") from exc
    try:
        for document in documents(text):
            yield from otlp_spans(document, having)
    except ValueError as exc:
        raise CommandError(
            f"--from {path}: not OTLP JSON ({exc}); give what a collector's `file` exporter writes "
            "(one ExportTraceServiceRequest JSON per line)"
        ) from exc
