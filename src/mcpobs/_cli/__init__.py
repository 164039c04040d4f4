"""`python -m mcpobs`: the demo, the generated pages (reference, conventions, tail sampling),
the Jaeger query URL, and the contract snapshot and diff."""

from __future__ import annotations


class CommandError(Exception):
    """An argument a command cannot use; the message is the one line `python -m mcpobs` prints (exit 2)."""
