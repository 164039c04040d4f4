"""`mcp.session.id`: the transport's session id, or its keyed hash, or nothing.

A legacy Streamable HTTP session id (`Mcp-Session-Id`) is a bearer value: whoever holds it
can send requests in that session until it ends. The conventions recommend recording it, so
mcpobs does by default; `session_id_key` records an HMAC of it instead (still one value per
session on both sides when they share the key, useless to replay), and
`record_session_id=False` leaves it out. It is never a metric label. Computed once per
session by the caller.
"""

from __future__ import annotations

import hashlib
import hmac

from mcpobs import semconv
from mcpobs._core.config import Settings
from mcpobs._core.text import clean


def session_attribute(session_id: object, settings: Settings) -> str | None:
    """The value of `mcp.session.id` for a session with this id, or None to record nothing."""
    if not isinstance(session_id, str) or not session_id or not settings.record_session_id:
        return None
    key = settings.session_id_key
    if key is None:
        return clean(session_id, settings.max_attribute_length)
    digest = hmac.new(key, session_id.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
    return digest[: semconv.SESSION_ID_HASH_LENGTH]
