__version__ = "0.1.0"

DISTRIBUTION = "mcpobs-otel"
"""The name on the package index (`pip install mcpobs-otel`) and of the zero-code entry points.

`mcpobs` on PyPI is an unrelated project; the import name stays `mcpobs`."""
