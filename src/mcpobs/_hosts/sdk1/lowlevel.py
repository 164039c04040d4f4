"""The lowlevel `Server` of mcp 1.x: its names from its own listing, its transports from the SDK.

- Names: a 1.x `@server.call_tool()` handler keeps the tools its server lists (`_tool_cache`,
  refreshed by the handler itself on a name it has not seen), so a tool is named from the first
  call that finds it listed; prompts are learned from `prompts/list` results, as on 2.x.
- A tool's failure: the handler flattens it into an `isError` result through
  `Server._make_error_result`, where `_server/sdk1/tool_failures.py` notes why first.
- Progress: `ServerSession.send_progress_notification` (`_server/sdk1/progress.py`).
- Transports: `stdio_server()` labels stdio; over HTTP the host mounts the session manager
  itself (`_server/sdk1/http.py` puts the boundary there).
"""

from __future__ import annotations

from typing import Any, cast

from mcpobs._core import inventory as I
from mcpobs._core.names import ServerNames
from mcpobs._core.patches import Patch
from mcpobs._hosts.host import Host, Setup, on_stdio


class Lowlevel1Host(Host):
    name = "lowlevel Server (mcp 1.x)"

    def know_names(self, names: ServerNames, owner: Any) -> None:
        attribute = I.SERVER1_TOOL_CACHE.attribute

        def listed(name: str) -> Any:
            cache: Any = getattr(owner, attribute, None)
            return cast("dict[str, Any]", cache).get(name) if isinstance(cache, dict) else None

        names.tool_lookup = listed

    def patches(self, setup: Setup) -> list[Patch]:
        return [Patch.of(I.SERVER1_STDIO, on_stdio)]
