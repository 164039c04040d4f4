"""`python -m mcpobs`: the demo, the reference page and the contract snapshot and diff."""
