"""The one reader of URIs and URLs: where a URI's userinfo, host, port, query and fragment are.

RFC 3986 ends the authority at the first `/`, `?` or `#` after `//`, because a userinfo may
not hold them unescaped. Sloppy writers leave them in anyway: a base64 password holds `/`
(`postgresql://svc:Zm9v/YmFy+cXV4==@db.internal/prod`), a typed one `?` or `#`. Read by the
RFC, such a URI has the user name as its host and the rest of the password in its path, and
whoever records the path or the host records the secret. So mcpobs reads the authority this
way (the rule docs/privacy.md states):

1. There is an authority when the URI starts with `//`, or with `scheme://` (a scheme holds no
   `/`, `?`, `#` or `:`). Without one (`mailto:a@b`, `urn:x`) there is no userinfo.
2. The *head* is what follows `//` up to the first `/`, `?` or `#` (the RFC's authority).
   An empty head (`file:///home/bob@corp`) has no userinfo.
3. If a `:` comes before any `@` in the head and the head is not `host:port` (a port is
   digits), the head starts `user:password`, and a password may hold any character: the
   userinfo ends at the **last** `@` of the whole URI, and the authority at the first `/`,
   `?` or `#` after it.
4. Otherwise, if the head holds an `@`, the userinfo ends at its last `@` (a user name holds
   no `/`, `?`, `#` or `:`; an `@` in one is read as part of the userinfo).
5. Otherwise there is no userinfo, and an `@` after the head is in the path, query or fragment.

Where the two readings differ, rule 3 chooses the one that hides more: a URI with a password
and an `@` in its path or query (`vault://a:pw@vault/doc?owner=bob@corp`) is read with
everything up to that last `@` as userinfo (`vault://REDACTED:REDACTED@corp`), which hides
the password at the price of the host. What no rule can tell apart is a password of digits
followed by `/`, `?` or `#` (`vault://alice:1234/5678@vault`) from `host:port/path`: it is
read as a port, as the RFC reads it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

REDACTED = "REDACTED"
"""What replaces a URI's userinfo parts, query values and fragment (OpenTelemetry's `url.full` word)."""

_HOST_PORT = re.compile(r"(?:\[[^\]]*\]|[^:@\[\]]*)(?::[0-9]*)?")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class Parts(NamedTuple):
    """Where each part of a URI is, as indices into it (`-1`: the part is not there)."""

    authority: int
    """Where the authority starts (after `//`), or -1 when the URI has none."""
    at: int
    """The `@` that ends the userinfo, or -1 when there is none."""
    host_end: int
    """Where the authority (host and port) ends: the path starts here."""
    query: int
    """The `?` that starts the query, or -1."""
    fragment: int
    """The `#` that starts the fragment, or -1."""


def _first(text: str, start: int, end: int | None = None) -> int:
    """The first `/`, `?` or `#` in `text[start:end]`, or `end` (the length when None)."""
    stop = len(text) if end is None else end
    found = stop
    for mark in "/?#":
        i = text.find(mark, start, found)
        if i != -1:
            found = i
    return found


def _authority_start(uri: str) -> int:
    if uri.startswith("//"):
        return 2
    colon = uri.find(":")
    if colon <= 0 or not uri.startswith("//", colon + 1):
        return -1
    if _first(uri, 0, colon) != colon:  # a `/`, `?` or `#` before the colon: no scheme
        return -1
    return colon + 3


@lru_cache(maxsize=256)
def split(uri: str) -> Parts:
    """The parts of `uri`, read by the rule above."""
    start = _authority_start(uri)
    at = -1
    if start == -1:
        host_end = 0
    else:
        head_end = _first(uri, start)
        head = uri[start:head_end]
        colon, first_at = head.find(":"), head.find("@")
        host_end = head_end
        if head and colon != -1 and (first_at == -1 or colon < first_at) and not _HOST_PORT.fullmatch(head):
            last = uri.rfind("@", start)
            if last != -1:  # rule 3: a password may hold anything, `@` too
                at = last
                host_end = _first(uri, last + 1)
        elif first_at != -1:  # rule 4
            at = uri.rfind("@", start, head_end)
    fragment = uri.find("#", host_end)
    query = uri.find("?", host_end, len(uri) if fragment == -1 else fragment)
    return Parts(start, at, host_end, query, fragment)


def scrub(uri: str) -> str:
    """`uri` without userinfo (`REDACTED:REDACTED@`), query values and fragment (`REDACTED`).

    OpenTelemetry's rule for `url.full` (https://opentelemetry.io/docs/specs/semconv/registry/attributes/url/)
    redacts the userinfo and the values of a list of signing keys (`AWSAccessKeyId`, `Signature`,
    `sig`, `X-Goog-Signature`), keeping the keys; a resource URI's query is whatever its server
    chose (`?token=`, `?api_key=`), so every value is redacted here, every key kept.
    """
    if "@" not in uri and "?" not in uri and "#" not in uri:
        return uri
    return _scrub(uri)


@lru_cache(maxsize=256)
def _scrub(uri: str) -> str:
    parts = split(uri)
    path_end = parts.query if parts.query != -1 else parts.fragment if parts.fragment != -1 else len(uri)
    if parts.at != -1:
        base = f"{uri[: parts.authority]}{REDACTED}:{REDACTED}@{uri[parts.at + 1 : path_end]}"
    else:
        base = uri[:path_end]
    if parts.query != -1:
        query = uri[parts.query + 1 : parts.fragment if parts.fragment != -1 else len(uri)]
        pairs: list[str] = []
        for part in query.split("&"):
            key, equals, _ = part.partition("=")
            pairs.append(f"{key}={REDACTED}" if equals else (REDACTED if part else part))
        base = f"{base}?{'&'.join(pairs)}"
    if parts.fragment != -1:
        base = f"{base}#{REDACTED}" if parts.fragment + 1 < len(uri) else f"{base}#"
    return base


def address(url: str) -> tuple[str | None, int | None]:
    """A URL's host (lower case, an IPv6 literal without brackets) and port (the scheme's default
    for http and https when none is written; None when the port is not a number below 65536)."""
    parts = split(url)
    if parts.authority == -1:
        return None, None
    hostport = url[parts.at + 1 if parts.at != -1 else parts.authority : parts.host_end]
    if hostport.startswith("["):
        close = hostport.find("]")
        host, rest = (hostport[1:close], hostport[close + 1 :]) if close != -1 else (hostport[1:], "")
        port_text = rest[1:] if rest.startswith(":") else None
    else:
        host, colon, port_text = hostport.partition(":")
        port_text = port_text if colon else None
    scheme = url[: url.find(":")].lower() if parts.authority > 2 else ""
    port: int | None
    if not port_text:
        port = _DEFAULT_PORTS.get(scheme)
    elif port_text.isascii() and port_text.isdigit() and int(port_text) < 65536:
        port = int(port_text)
    else:
        port = None
    return (host.lower() or None), port
