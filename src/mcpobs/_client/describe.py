"""The client's one line per session, as the server logs its own: what this client connected to.

Logged once, when `Client.__aenter__` returns (so also for a client that pins a 2026-07-28
revision and sends no `server/discover`: its line says the server did not identify itself).
It logs on `mcpobs.session.client`, a child of the server's `mcpobs.session`: one setting shows both; nothing goes to stdout.
"""

from __future__ import annotations

import logging
from typing import Any

from mcpobs import semconv as S
from mcpobs._client import memory
from mcpobs._core import inventory as I
from mcpobs._core.names import bounded_version
from mcpobs._core.privacy import DEFAULT, Privacy
from mcpobs._core.text import for_log

session_logger = logging.getLogger("mcpobs.session.client")


def describe(client: Any, privacy: Privacy = DEFAULT) -> str | None:
    """Log the line for an entered `Client`, and return it (None when there is no session).

    The server's name and version are its own words: through the privacy step, and written
    on one line, bounded (`text.for_log`), so a server cannot forge a line or fill the log.
    """
    session = getattr(client, I.CLIENT_SESSION.attribute, None)
    if session is None or not session_logger.isEnabledFor(logging.INFO):
        return None
    info = session.server_info
    server = (
        f"{for_log(privacy.name(info.name) or '?')}/{for_log(privacy.name(info.version) or '?')}"
        if info is not None
        else "?"
    )
    if client.mode == "legacy":
        how = "initialize"
    elif client.mode == "auto":
        how = "fallback" if session.initialize_result is not None else "discover"
    else:
        how = "pinned"  # the revision was given: nothing was sent to learn it
    capabilities = session.server_capabilities
    dumped: dict[str, Any] = capabilities.model_dump(exclude_none=True) if capabilities else {}
    offered = [for_log(k) for k in sorted(dumped)[:16] if dumped[k] is not None]  # extra keys are the server's words
    remembered = memory.remembered(session)
    listing = remembered.listing if remembered is not None else None
    network = remembered.network.labels if remembered is not None and remembered.network is not None else {}
    where = network.get(S.SERVER_ADDRESS)
    line = (
        f"mcp client session server={server} protocol={bounded_version(session.protocol_version)} via={how} "
        f"tools={'?' if listing is None else len(listing)} capabilities={offered} "
        f"transport={network.get(S.NETWORK_TRANSPORT, 'memory')}" + (f" address={for_log(where)}" if where else "")
    )
    session_logger.info("%s", line)
    return line
