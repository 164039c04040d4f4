"""A query API over HTTP (Jaeger's or Prometheus's): where it is, which service to ask about, and the one GET.

Every way a GET goes wrong (nothing answering, an HTTP error, an answer too large to read) is
one `CommandError` line naming the store and what to do.
"""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping

from mcpobs._cli import CommandError
from mcpobs._cli.render import printable
from mcpobs._cli.stores.reading import MAX_BYTES, MIB, Reading

TIMEOUT = 10.0


def base_url(address: str) -> str:
    """``host:port`` or a URL, as a URL with no trailing slash."""
    address = address.strip().rstrip("/")
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


class Store:
    """A query API over HTTP: Jaeger's or Prometheus's. `fix` says what to do when nothing answers there."""

    what = "a query API"

    def __init__(self, base: str, fix: str, timeout: float = TIMEOUT) -> None:
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
                f"{self.what} at {self.base} answered {endpoint} with more than {MAX_BYTES // MIB} MiB; "
                "ask for less (a shorter --since, a lower --limit)"
            )
        return body

    def reading(self, endpoint: str) -> Reading:
        return Reading(f"{self.what} at {self.base}, {endpoint}", f"is {self.base} {self.what}?")


def fetch(url: str, timeout: float = TIMEOUT) -> tuple[int, bytes]:
    """(HTTP status, body) of a GET, the body cut one byte past `MAX_BYTES`; `OSError` when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as error:
        return error.code, error.read(4096)
