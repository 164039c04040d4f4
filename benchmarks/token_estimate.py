"""How far the catalog token estimate (bytes / 4) is from exact counts, on real servers' catalogs (issue 53).

Lists each server's tools over stdio, prices each tool's shown JSON (`mcpobs._core.cost.tool_json`)
by the estimate and by exact encodings, and prints the totals and per-tool errors as JSON:

    python benchmarks/token_estimate.py "mcp-server-git --repository ." "mcp-server-time" "mcp-server-fetch"

Needs the `tokens` extra (cl100k_base, tiktoken's own count); o200k_base is counted too when
`quicktok` (the quicktok-v1 package, which ships that vocabulary) is installed. Nothing is downloaded.
"""

from __future__ import annotations

import json
import shlex
import statistics
import sys
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from mcpobs._core import cost


def encodings() -> dict[str, Any]:
    found: dict[str, Any] = {"cl100k_base": cost.counter("cl100k_base").count}
    try:
        import quicktok  # pyright: ignore[reportMissingImports]

        o200k: Any = quicktok.get_encoding("o200k_base")  # pyright: ignore[reportUnknownMemberType]
        found["o200k_base"] = lambda text: len(o200k.encode(text.decode()))
    except ImportError:
        pass
    return found


async def catalog(command: str) -> list[dict[str, Any]]:
    program, *args = shlex.split(command)
    async with Client(StdioServerParameters(command=program, args=args)) as client:
        listed = await client.list_tools()
    return [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listed.tools]


async def measure(commands: list[str]) -> dict[str, Any]:
    texts: dict[str, list[bytes]] = {}
    for command in commands:
        texts[shlex.split(command)[0]] = [cost.tool_json(t) for t in await catalog(command)]
    every = [text for found in texts.values() for text in found]
    result: dict[str, Any] = {
        "servers": {
            name: {"tools": len(found), "bytes": sum(map(len, found)), "estimate": sum(map(cost.estimate, found))}
            for name, found in texts.items()
        },
        "tools": len(every),
        "bytes": sum(map(len, every)),
        "estimate": sum(map(cost.estimate, every)),
    }
    for name, count in encodings().items():
        exact = [count(text) for text in every]
        errors = [(cost.estimate(text) - n) / n for text, n in zip(every, exact, strict=True)]
        for server, found in texts.items():
            result["servers"][server][name] = sum(count(text) for text in found)
        result[name] = {
            "exact": sum(exact),
            "total_error_pct": round(100 * (result["estimate"] - sum(exact)) / sum(exact), 1),
            "per_tool_mean_abs_error_pct": round(100 * statistics.mean(map(abs, errors)), 1),
            "per_tool_range_pct": [round(100 * min(errors), 1), round(100 * max(errors), 1)],
            "bytes_per_token": round(result["bytes"] / sum(exact), 2),
        }
    return result


if __name__ == "__main__":
    json.dump(anyio.run(measure, sys.argv[1:]), sys.stdout, indent=2)
    print()
