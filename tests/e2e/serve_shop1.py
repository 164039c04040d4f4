"""The shop on FastMCP 1 (mcp 1.x), over Streamable HTTP, instrumented by `mcpobs.instrument()` alone.

Run by tests/e2e/test_sdk1_dashboards.py with the mcp 1.x venv's Python, as
``serve_shop1.py PORT``, with only standard OTEL_* variables set. SIGTERM stops uvicorn;
mcpobs flushes spans and metrics at the end of the app's lifespan.
"""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parent.parent / "sdk1")]

import uvicorn  # noqa: E402
from mcp.server.fastmcp import Context  # noqa: E402
from servers1 import create  # noqa: E402

import mcpobs  # noqa: E402

mcpobs.instrument()
server = create("fastmcp1")


@server.tool()
def override_refund_limit(order_id: str) -> str:
    """Refunds above the limit: this agent is not allowed (access refused in the handler)."""
    raise PermissionError(f"this agent may not override the refund limit of {order_id}")


@server.tool()
async def flood(ctx: Context, reports: int = 230) -> str:
    """Reports progress past the cap."""
    for i in range(reports):
        await ctx.report_progress(i + 1, reports)
    return "flooded"


if __name__ == "__main__":
    uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
