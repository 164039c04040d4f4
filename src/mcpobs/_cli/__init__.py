"""`python -m mcpobs`: the demo, the generated pages (reference, conventions, tail sampling),
the Jaeger query URL, and the contract snapshot and diff."""
