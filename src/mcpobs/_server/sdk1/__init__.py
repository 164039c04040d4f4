"""The mcp 1.x line's server side (mcp 1.24 to 1.30): no middleware chain, so its requests are
observed where the lowlevel `Server` dispatches them. Deleting this folder (with `_client/sdk1/`,
`_hosts/sdk1/` and the inventory's `# <sdk1>` blocks) retires the line (scripts/check-without-sdk1)."""
