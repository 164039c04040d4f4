"""The mcp 1.x line's client side (mcp 1.24 to 1.30): `ClientSession` over its transport functions
(`session.py`, `transports.py`, `answers.py`), FastMCP 3's `Client`, and a 1.x server's own
requests to its client (`asks.py`).

Code outside the line's folders reaches it only through `asks()` and `patches()`, called by
`_instrumentor._sdk1` on that line. Deleting this folder (with `_server/sdk1/`, `_hosts/sdk1/` and
the inventory's `# <sdk1>` blocks) retires the line (scripts/check-without-sdk1).
"""

from __future__ import annotations

from mcpobs._core.config import Settings
from mcpobs._core.patches import Patch
from mcpobs._core.telemetry import Telemetry


def server_asks(telemetry: Telemetry) -> list[Patch]:
    """A server's own requests to its client: wrapped whether or not clients are instrumented."""
    from mcpobs._client.sdk1 import asks

    return asks.patches(telemetry)


def patches(telemetry: Telemetry, settings: Settings) -> list[Patch]:
    """The client: a `ClientSession`'s requests, its answers to its server, its transports, FastMCP 3's `Client`."""
    from mcpobs._client.sdk1 import answers, fastmcp3, session, transports

    return [
        *session.patches(telemetry),
        *answers.patches(telemetry),
        *transports.patches(settings),
        *fastmcp3.patches(),
    ]
