"""What the server side and the client side share.

The registry helpers (known methods and codes, bounded names, label sets, outcome
classification), the one telemetry object every hook is handed, configuration and the user's
hooks, the guard that keeps telemetry bugs away from the call, the record of every change
made to the SDK (which `uninstrument()` undoes), and configuring OpenTelemetry from `OTEL_*`.
"""
