"""What differs between the OpenTelemetry releases mcpobs supports, detected here and nowhere else.

What differs between the supported releases is detected here by what a release has, never by
its version number, so no other module branches on a release.
"""

from __future__ import annotations


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
