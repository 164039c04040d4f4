"""What the server side and the client side share.

The registry helpers (bounded names, label sets, outcome classification), the one telemetry
object every hook is handed, configuration, the guard that keeps telemetry bugs away from
the call, and the patch table that `uninstrument()` undoes.
"""
