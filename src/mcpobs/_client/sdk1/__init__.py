"""The mcp 1.x line's client side (mcp 1.24 to 1.30): `ClientSession` over its transport functions,
FastMCP 3's `Client`, and a 1.x server's own requests to its client. Deleting this folder (with
`_server/sdk1/`, `_hosts/sdk1/` and the inventory's `# <sdk1>` blocks) retires the line."""
