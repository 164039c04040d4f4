"""A Jaeger query URL that works: `python -m mcpobs jaeger-url`, and what the demo prints.

Jaeger v2's query API (`/api/v3/traces`) refuses a search without a time window (HTTP 400,
``query.start_time_min and query.start_time_max are required``) and one without a result
limit (HTTP 500, ``search depth must be greater than 0``): a bare ``?query.service_name=``
URL never works. This builds the whole query, ending a few minutes ahead of now so a clock
slightly ahead still finds the newest traces.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

DEFAULT_QUERY = "127.0.0.1:16686"
"""Where `scripts/stack` (and `docker compose up`) serve Jaeger's query API."""


def query_base() -> str:
    """The Jaeger query address: ``JAEGER_QUERY_HTTP`` (as scripts/stack reads it), else the default."""
    address = os.environ.get("JAEGER_QUERY_HTTP", "").strip() or DEFAULT_QUERY
    return address if "://" in address else f"http://{address}"


def service_name() -> str:
    """The service.name the SDK would give spans here (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES).

    Raises `CommandError` when neither names one: a URL for `unknown_service` finds nothing useful.
    """
    from opentelemetry.sdk.resources import Resource

    from mcpobs._cli import CommandError

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
    return f"{(base or query_base()).rstrip('/')}/api/v3/traces?{urlencode(params)}"


def _rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
