"""The mcp 1.x line's server side (mcp 1.24 to 1.30): no middleware chain, so a request is
observed where the lowlevel `Server` dispatches it (`dispatch.py`), its session from `Server.run`
(`sessions.py`), its hosts' seams through `_hosts/sdk1`.

Code outside the line's folders reaches it only through `patches()`, called by
`_instrumentor._sdk1` on that line. Deleting this folder (with `_client/sdk1/`, `_hosts/sdk1/` and
the inventory's `# <sdk1>` blocks) retires the line (scripts/check-without-sdk1).
"""

from __future__ import annotations

from mcpobs._core.patches import Changes, Patch
from mcpobs._core.telemetry import Telemetry


def patches(telemetry: Telemetry, changes: Changes) -> list[Patch]:
    """Every server seam of the line, its hosts' included; each set-up step's undo goes to `changes`."""
    from mcpobs._server.sdk1.setup import ServerSetup1

    return ServerSetup1(telemetry, changes).patches()
