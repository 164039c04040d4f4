"""A tool that asks the user to confirm before it acts: pending input, round by round.

Under the 2026-07-28 protocol a tool that needs the user's answer does not block: its
first round *returns* an ``input_required`` result with the question, and the client
calls again with the answer. mcpobs records each round as its own ``tools/call`` span:

- round 1: ``mcpobs.outcome=pending_input`` (not an error, not a latency sample),
  ``mcpobs.mrtr.input_methods`` says what it asked for (``elicitation/create``);
- round 2: ``mcpobs.outcome=ok``, linked to round 1; ``mcpobs.mrtr.round`` counts them.

Run it::

    python examples/elicitation.py

The tool asks with `Resolve(...)` and `Elicit`, the SDK's declarative way; a tool can also
return an `InputRequiredResult` by hand, and the rounds are recorded the same way.
"""

from __future__ import annotations

from typing import Annotated

import anyio
import mcp_types as types
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.trace import SpanKind
from pydantic import BaseModel

import mcpobs
from mcpobs import semconv as S


class Confirmation(BaseModel):
    confirm: bool


async def ask_to_confirm(order_id: str) -> Elicit[Confirmation]:
    return Elicit(f"Cancel order {order_id}? This cannot be undone.", Confirmation)


def create_server() -> MCPServer:
    server = MCPServer("shop")

    @server.tool()
    async def cancel_order(order_id: str, answer: Annotated[Confirmation, Resolve(ask_to_confirm)]) -> str:
        """Cancel an order once the user confirms."""
        return f"{order_id} cancelled" if answer.confirm else f"{order_id} kept"

    return server


class PrintRounds(SpanProcessor):
    """Print each server round of a tools/call as it ends."""

    def on_end(self, span: ReadableSpan) -> None:
        a = span.attributes or {}
        if span.kind is SpanKind.SERVER and span.name.startswith("tools/call"):
            methods = a.get(S.MRTR_INPUT_METHODS)
            asked = f"  {S.MRTR_INPUT_METHODS}={list(methods)}" if methods else ""
            linked = "  (linked to the round before)" if span.links else ""
            print(
                f"span {span.name}: {S.MRTR_ROUND}={a.get(S.MRTR_ROUND)}  {S.OUTCOME}={a.get(S.OUTCOME)}{asked}{linked}"
            )


async def on_elicit(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
    """The client's side: show the question to the user; here the user says yes."""
    print(f"user is asked: {params.message!r} -> yes")
    return types.ElicitResult(action="accept", content={"confirm": True})


async def main() -> None:
    provider = TracerProvider()
    provider.add_span_processor(PrintRounds())
    mcpobs.instrument(tracer_provider=provider)

    async with Client(create_server(), elicitation_callback=on_elicit) as client:
        result = await client.call_tool("cancel_order", {"order_id": "O-2001"})
    print(f"result: {result.content[0].text}")


if __name__ == "__main__":
    anyio.run(main)
