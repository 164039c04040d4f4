"""The agent host of tests/tasks/test_fastmcp4_tasks.py: a `fastmcp.Client` in its own process,
instrumented with `mcpobs.instrument()` and exporting over OTLP (from the standard variables) as
the server and the worker do. It drives the tasks both ways fastmcp-tasks offers (the transparent
`call_tool`, whose resolver polls and answers input; `call_tool_task` and its `ToolTask`) and
writes what each returned as JSON to the file named by its last argument (nothing on stdout).

Usage: python agent.py URL RESULTS_JSON
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import mcpobs

mcpobs.instrument()

from fastmcp import Client  # noqa: E402 (after instrument(), as an agent host would)
from fastmcp_tasks import call_tool_task  # noqa: E402


async def _elicit(message: Any, response_type: Any, params: Any, context: Any) -> dict[str, bool]:
    return {"ok": True}


async def _running(task: Any) -> None:
    """Until the worker runs `task` (its tool reports "running": the wire says `working` before too)."""
    for _ in range(300):
        if (await task.status()).status_message == "running":
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the worker did not start the task in 30 s")


async def scenarios(url: str) -> dict[str, str]:
    results: dict[str, str] = {}
    async with Client(url, elicitation_handler=_elicit) as client:
        await client.list_tools()  # what it offers its model (a client names the tools it listed)
        r = await client.call_tool("slow", {"n": 3})
        results["slow"] = r.content[0].text
        r = await client.call_tool("boom", {}, raise_on_error=False)
        results["boom"] = f"is_error={r.is_error}"
        r = await client.call_tool("ask", {}, raise_on_error=False)
        results["ask"] = r.content[0].text
        task = await call_tool_task(client, "forever", {})
        await _running(task)
        await asyncio.sleep(1.0)  # cancelled after a second of running
        await task.cancel()
        for _ in range(50):
            status = await task.status()
            if status.status == "cancelled":
                break
            await asyncio.sleep(0.1)
        results["forever"] = status.status
        task = await call_tool_task(client, "broken", {})
        for _ in range(100):
            status = await task.status()
            if status.status != "working":
                break
            await asyncio.sleep(0.1)
        results["broken"] = status.status
        await _running(await call_tool_task(client, "long", {}))  # still running when the worker is stopped
    return results


if __name__ == "__main__":
    url, out = sys.argv[1:]
    Path(out).write_text(json.dumps(asyncio.run(scenarios(url))))
