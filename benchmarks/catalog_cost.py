"""What pricing a catalog (issue 53) adds to a `tools/list`: same run, interleaved rounds, a ratio.

One instrumented process lists a 12-tool catalog in memory through `mcp.Client` (server and
client spans both recorded, to an exporter that drops them), in three configurations taken in
turn, round after round:

- ``cost-off``: mcpobs as before issue 53: the catalog fingerprint on the server, no cost;
- ``cost-on``: the cost on both sides' spans and the size gauges, as shipped (computed once per
  catalog fingerprint: the steady state of a server listing an unchanged catalog);
- ``cost-uncached``: the cost computed afresh on every listing (what the first listing of each
  new catalog pays).

CPU time per listing (``time.process_time``), the median of each configuration's rounds, and the
ratios to ``cost-off``. A short run: ``python benchmarks/catalog_cost.py [--rounds 15 --listings 200]``.
Writes benchmarks/results/catalog_cost.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from pydantic import Field

import mcpobs
from mcpobs._client import catalog_size as client_size
from mcpobs._core import cost
from mcpobs._server.catalog_size import CatalogSize

HERE = Path(__file__).resolve().parent
CONFIGS = ("cost-off", "cost-on", "cost-uncached")


class _Drop(SpanExporter):
    def export(self, spans: Any) -> SpanExportResult:
        return SpanExportResult.SUCCESS


def server() -> MCPServer:
    """Twelve tools of a git-like server: a paragraph of description and three typed arguments each."""
    shop = MCPServer("catalog", version="1.0.0")
    for n in range(12):

        def tool(
            repo_path: str = Field(description="Path to the repository."),
            revision: str = Field("HEAD", description="The revision to read."),
            max_count: int = Field(10, description="How many entries at most."),
        ) -> str:
            return "ok"

        shop.add_tool(
            tool,
            name=f"git_tool_{n}",
            description=f"Tool {n}: shows what the repository holds at a revision. " * 4,
        )
    return shop


class Switch:
    """Turns the pricing off (as before issue 53) or uncached, by swapping the two seams in this process."""

    def __init__(self) -> None:
        self.server_listed = CatalogSize.listed
        self.client_listed = client_size.listed
        self.costs_of = cost.CatalogCosts.of

    def set(self, config: str) -> None:
        CatalogSize.listed = self.server_listed  # type: ignore[method-assign]
        client_size.listed = self.client_listed
        cost.CatalogCosts.of = self.costs_of  # type: ignore[method-assign]
        if config == "cost-off":
            CatalogSize.listed = lambda *args, **kwargs: {}  # type: ignore[method-assign]
            client_size.listed = lambda *args, **kwargs: {}
        elif config == "cost-uncached":
            of = self.costs_of

            def uncached(costs: cost.CatalogCosts, *args: Any, **kwargs: Any) -> cost.CatalogCost:
                costs._by_fingerprint.clear()  # pyright: ignore[reportPrivateUsage]
                return of(costs, *args, **kwargs)

            cost.CatalogCosts.of = uncached  # type: ignore[method-assign]


async def run(rounds: int, listings: int) -> dict[str, Any]:
    tracer = TracerProvider()
    tracer.add_span_processor(SimpleSpanProcessor(_Drop()))
    mcpobs.instrument(tracer_provider=tracer, meter_provider=MeterProvider(metric_readers=[InMemoryMetricReader()]))
    switch = Switch()
    per_listing: dict[str, list[float]] = {c: [] for c in CONFIGS}
    async with Client(server()) as client:
        listed = await client.list_tools()
        wire = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listed.tools]
        for _ in range(3):  # warm every path once
            for config in CONFIGS:
                switch.set(config)
                await client.list_tools()
        for n in range(rounds):
            order = CONFIGS if n % 2 == 0 else tuple(reversed(CONFIGS))
            for config in order:
                switch.set(config)
                start = time.process_time()
                for _ in range(listings):
                    await client.list_tools()
                per_listing[config].append((time.process_time() - start) / listings)
    switch.set("cost-on")
    mcpobs.uninstrument()
    total = cost.catalog_cost(wire)
    medians = {c: statistics.median(v) for c, v in per_listing.items()}
    return {
        "catalog": {"tools": total.tools, "bytes": total.bytes, "tokens_estimate": total.tokens},
        "rounds": rounds,
        "listings_per_round": listings,
        "us_per_listing": {c: round(m * 1e6, 1) for c, m in medians.items()},
        "ratio_to_cost_off": {c: round(m / medians["cost-off"], 3) for c, m in medians.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--listings", type=int, default=200)
    parser.add_argument("--out", default=str(HERE / "results" / "catalog_cost.json"))
    args = parser.parse_args()
    result = anyio.run(run, args.rounds, args.listings)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    json.dump(result, sys.stderr, indent=2)
    print(file=sys.stderr)


if __name__ == "__main__":
    main()
