"""Tasks: work longer than a request, from submission through a queue to its terminal state.

Imports only `mcpobs._core` and the registry; the sides' adapters (`_server`, `_client`) and the
SDK lines' (their `sdk1` folders, `_hosts`) call in (docs/architecture.md, "Where tasks go").
"""
