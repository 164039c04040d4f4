"""A long-running export whose progress you can watch while it still runs.

Each progress report the tool sends becomes a short ``progress`` span, a child of the
``tools/call`` span, that *ends at once*: a span exporter sees it (and a backend can show
it) while the call is still running, instead of everything appearing when the call ends.

This example prints every span the moment it ends, with the time since the start::

    python examples/long_export.py

The ``progress`` lines arrive one by one, about 0.3 s apart, and the ``tools/call`` line
comes last. In production the same spans go through a `BatchSpanProcessor` to your
backend; its default 5 s schedule means a stuck export is visible within seconds.
"""

from __future__ import annotations

import time

import anyio
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider

import mcpobs
from mcpobs import semconv as S

START = time.monotonic()


class PrintWhenEnded(SpanProcessor):
    """Print one line per span as it ends (a stand-in for an exporter)."""

    def on_end(self, span: ReadableSpan) -> None:
        a = span.attributes or {}
        if span.name == S.PROGRESS_SPAN:
            detail = f"{a.get(S.PROGRESS_PERCENTAGE, 0):3.0f}% {a.get(S.PROGRESS_MESSAGE)!r}"
        else:
            detail = f"outcome={a.get(S.OUTCOME)}"
        print(f"+{time.monotonic() - START:.2f}s  {span.kind.name:<8} {span.name:<26} {detail}", flush=True)


def create_server() -> MCPServer:
    server = MCPServer("exports")

    @server.tool()
    async def export_orders(ctx: Context, batches: int = 5) -> str:
        """Export the order history in batches, reporting progress after each."""
        for done in range(1, batches + 1):
            await anyio.sleep(0.3)  # one batch of real work
            await ctx.report_progress(done, batches, f"batch {done} of {batches} written")
        return f"exported {batches} batches"

    return server


async def main() -> None:
    provider = TracerProvider()
    provider.add_span_processor(PrintWhenEnded())
    # A progress message is text the tool wrote: recorded only when you opt in (docs/privacy.md).
    mcpobs.instrument(tracer_provider=provider, record_progress_messages=True)

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        print(f"+{time.monotonic() - START:.2f}s  client heard progress {progress:g}/{total:g}", flush=True)

    async with Client(create_server()) as client:
        result = await client.call_tool("export_orders", {"batches": 5}, progress_callback=on_progress)
    print(f"result: {result.content[0].text}")


if __name__ == "__main__":
    anyio.run(main)
