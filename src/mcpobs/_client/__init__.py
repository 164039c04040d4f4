"""The client side: one CLIENT span per outbound request, joined to the server's trace.

- `seams`: which SDK functions are wrapped, and the wrappers (start here).
- `calls`: one outbound request that owns its life (replied or failed, ended, counted).
- `spans`: opening a call: its name, labels, parent, and the holder that claims it.
- `classify`: how a request ended (reply, error code, exception).
- `rounds`: multi-round-trip operations, which claim their rounds (the anchor span).
- `side_spans`: the SDK's own send span, requests sent outside `ClientSession`, answers to the server.
- `wire`: what mcpobs adds to outgoing messages (trace header, `_meta`).
- `listen`: the span of a `Client.listen` stream.
- `negotiation`: the `server/discover` probe and the fallback to `initialize` in `auto` mode (it claims both).
- `memory`: per session, where its server is and the tools it listed.
- `names`: bounds on the tool and prompt names a client sends.

On the JSON-RPC transports (stdio, legacy in-memory, Streamable HTTP) the SDK injects
`traceparent` itself, from mcpobs's span. In process (`DirectDispatcher`) the server's
handler runs in the caller's own context, under the call's span, so nothing needs carrying.
"""
