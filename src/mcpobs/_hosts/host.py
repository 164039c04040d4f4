"""`Host`: what mcpobs asks of a server framework, answered here for the SDK's lowlevel `Server`.

A lowlevel `Server` has handlers and nothing else: no registry (its names are learned, up to
a bound, from its own tools/list and prompts/list results, `_core/names.py`), no tool-run
path of its own (a failed tool is whatever its handler returns or raises, classified by the
middleware), progress through the SDK's `ServerSession.report_progress`, its app from
`Server.streamable_http_app` and its transports from the SDK. The other adapters override
what their framework does differently.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpobs._core.names import ServerNames
from mcpobs._core.patches import Patch

if TYPE_CHECKING:
    from mcpobs._server.setup import ServerSetup


class Host:
    """A server framework. This base is the SDK's lowlevel `Server` (it owns nothing more)."""

    name = "lowlevel Server"

    drops_sdk_span_middleware = False
    """Whether the framework takes the SDK's `OpenTelemetryMiddleware` out itself (so
    `uninstrument()` must not put it back where mcpobs's middleware was)."""

    def is_owner(self, obj: object) -> bool:
        """Whether `obj` is this framework's server object (what `instrument_server` may be given)."""
        return False

    def owner_of(self, server: Any) -> Any | None:
        """The framework object that built this lowlevel `Server`, or None if not this framework's."""
        return None

    def lowlevel_of(self, owner: Any) -> Any:
        """The lowlevel `Server` a framework object serves through."""
        return owner

    def know_names(self, names: ServerNames, owner: Any) -> None:
        """Point `names` at the framework's live registries (a lowlevel `Server` has none: learned)."""

    def patches(self, setup: ServerSetup) -> list[Patch]:
        """The framework's own seams (each a row of `_core/inventory.py`)."""
        return []
