"""Two hosts calling the replicas a load balancer lists, until SIGTERM: the clients of a rolling deploy.

Run by tests/e2e/test_canary_gate.py as ``rollout_hosts.py REPLICAS_JSON`` with only standard OTEL_*
variables set. The file maps each service to the URLs of its live replicas; the test rewrites it
to roll a release out. Each round, each host opens one connection per service to the next
replica (round robin), lists the tools and calls the service's tool twice.

- The old host (client version 1.4.0) caches listings in one store across its connections, as
  the SDK's response cache allows, for as long as the server's `ttlMs` says: it keeps the
  catalog it listed first, from release 1.0.0.
- The new host (client version 2.1.0) lists on every connection: its catalog is the answering
  replica's.
"""

import json
import sys
from contextlib import suppress
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.caching import CacheConfig, InMemoryResponseCacheStore
from mcp_types import Implementation

import mcpobs

mcpobs.instrument()
TOOLS = {"stock": "check_stock", "pricing": "get_price", "orders": "open_orders"}
OLD_STORE = InMemoryResponseCacheStore()


def cache(host: str, service: str) -> CacheConfig | None:
    if host == "2.1.0":
        return None
    return CacheConfig(store=OLD_STORE, partition="old-host", target_id=service)


async def converse(host: str, service: str, url: str) -> None:
    info = Implementation(name="support-host", version=host)
    with suppress(Exception):  # a replica going away mid-call is the deploy's business, not the host's
        async with Client(url, cache=cache(host, service), client_info=info) as client:
            await client.list_tools()
            for _ in range(2):
                with suppress(RuntimeError):  # output validation against the schema the host holds
                    await client.call_tool(TOOLS[service], {"sku": "KG-1031"})


async def main(replicas_file: Path) -> None:
    turn = 0
    while True:
        replicas = json.loads(replicas_file.read_text())
        async with anyio.create_task_group() as group:
            for service, urls in replicas.items():
                for n, host in enumerate(("1.4.0", "2.1.0")):
                    group.start_soon(converse, host, service, urls[(turn + n) % len(urls)])
        turn += 1
        await anyio.sleep(0.1)


anyio.run(main, Path(sys.argv[1]))
