"""What differs between the OpenTelemetry releases mcpobs supports, detected here and nowhere else.

mcpobs supports opentelemetry-api/-sdk/-exporter-otlp-proto-http 1.44 and newer, with
opentelemetry-semantic-conventions and -instrumentation 0.65b0 and newer (pyproject.toml), so a
host that caps OpenTelemetry at 1.44 (google-adk 2.13) installs beside it. 1.44 is the oldest
SDK with `_update_resource`, which `service_version` needs; every convention name mcpobs imports
is the same from 0.61b0 on. What differs between the supported releases is detected here by
what a release has, never by its version number, so no other module branches on a release.
"""

from __future__ import annotations

from typing import Final

from opentelemetry.semconv.schemas import Schemas

from mcpobs import semconv


def schema_url(version: str) -> str:
    """The schema URL of core conventions `version`: the package's own constant where it has it.

    opentelemetry-semantic-conventions publishes a schema's constant a release after the SDK it
    pairs with (0.66b0, beside the SDK 1.45, has `V1_44_0`; 0.65b0, beside 1.44, stops at 1.43.0).
    The telemetry mcpobs emits is the same on every supported release, so it carries the same URL
    on each: from an older package, the URL built the way the package spells its own.
    """
    member = Schemas.__members__.get("V" + version.replace(".", "_"))
    if member is not None:
        return member.value
    published = next(iter(Schemas)).value
    return f"{published.rpartition('/')[0]}/{version}"


SCHEMA_URL: Final = schema_url(semconv.SCHEMA_VERSION)
"""The schema URL the tracer and meter carry: the registry's pinned schema, by this release's package."""


def drop_connections(exporter: object) -> None:
    """Close an OTLP/HTTP exporter's pooled connections; it opens new ones when next asked.

    Up to 1.44 the exporter holds a `requests.Session` (`_session`); from 1.45 an HTTP transport
    behind its client (`_client._transport`, on requests or urllib3), whose `close()` does the
    same. Anything else (a gRPC exporter, a release that moved them again) is left as it is.
    """
    holder = getattr(exporter, "_session", None) or getattr(getattr(exporter, "_client", None), "_transport", None)
    close = getattr(holder, "close", None)
    if callable(close):
        close()
