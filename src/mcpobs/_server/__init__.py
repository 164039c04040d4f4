"""The server side: what happens to a request an MCP server receives.

`setup` says how a server is set up (and undone); the middleware opens one SERVER span per
inbound message and classifies how it ended; the other modules are the seams deeper in the call that add to that span (tool failures,
progress, cancellation, multi-round-trip rounds, subscriptions, identity, content) and the
Streamable HTTP boundary that sees what the transport refuses before any handler runs.
"""
