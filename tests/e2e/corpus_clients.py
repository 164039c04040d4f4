"""Two client releases calling the corpus test's server: ``corpus_clients.py URL ROUNDS``.

Release 1.0.0 sends `sku` alone, `unit=each`, and `unit=pallet` with a nested `warehouse`; release 2.0.0
also sends the newer optional `note` and `unit=box` with a `warehouse.bin`. Every value is a distinct
secret (corpus_release.calls). Instrumented too: the secrets must reach neither service's spans.
"""

import sys

import anyio
from corpus_release import calls
from mcp import Client
from mcp_types import Implementation

import mcpobs

mcpobs.instrument()


async def main(url: str, rounds: int) -> None:
    for version in ("1.0.0", "2.0.0"):
        async with Client(url, client_info=Implementation(name="support-host", version=version)) as client:
            await client.list_tools()
            for arguments in calls(version, rounds):
                await client.call_tool("check_stock", arguments)


anyio.run(main, sys.argv[1], int(sys.argv[2]))
