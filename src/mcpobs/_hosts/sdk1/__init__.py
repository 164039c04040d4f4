"""The mcp 1.x line's hosts: its lowlevel `Server`, FastMCP 1 (`mcp.server.fastmcp`) and FastMCP 3.
Deleting this folder (with `_server/sdk1/`, `_client/sdk1/` and the inventory's `# <sdk1>` blocks)
retires the line."""
