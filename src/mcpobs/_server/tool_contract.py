"""The served tool's contract on each tools/call: its fingerprints on the span, a client holding
another schema flagged and counted, and (with `record_shapes`) the shapes of what callers send."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpobs import semconv as S
from mcpobs._core.contract import FingerprintCache
from mcpobs._core.names import ServerNames
from mcpobs._core.telemetry import Telemetry
from mcpobs._server.call import Call
from mcpobs._server.corpus import Corpus


class ToolContract:
    """The fingerprints of one server's tools and the corpus of their calls' shapes."""

    def __init__(self, telemetry: Telemetry, names: ServerNames, constant: Mapping[str, Any]) -> None:
        self.telemetry = telemetry
        self.names = names
        self.constant = constant
        """The labels every request of the server carries (the stale count's, beside the tool)."""
        self.on_span = S.CONTRACT not in telemetry.settings.omit_attributes
        """The served tool's fingerprints on every tools/call span; else only the stale flag, when true."""
        known = names.known  # the caches of registered names grow with the catalog
        self.fingerprints = FingerprintCache(known)
        self.corpus = Corpus(telemetry.settings, telemetry.privacy, known) if telemetry.settings.record_shapes else None

    def attributes(self, tool_name: str, meta: Any, recording: bool) -> dict[str, Any] | None:
        """Fingerprint the tool being called, and flag (and count) a client holding another schema."""
        held = meta.get(S.META_SCHEMA_FINGERPRINT) if meta else None
        if held is None and not (recording and self.on_span):
            return None  # nothing to count, nowhere to write
        tool = self.names.tool_object(tool_name)
        if tool is None:
            return None
        schema, contract = self.fingerprints.of(tool)
        attrs: dict[str, Any] = (
            {S.TOOL_SCHEMA_FINGERPRINT: schema, S.TOOL_CONTRACT_FINGERPRINT: contract} if self.on_span else {}
        )
        if isinstance(held, str) and held != schema:
            # Only when true: `false` on every ok call would be bytes that say what absence says.
            attrs[S.TOOL_SCHEMA_STALE] = True
            self.telemetry.stale_calls.add(1, {S.GEN_AI_TOOL_NAME: S.bounded_target(tool_name), **self.constant})
        return attrs

    def shapes(self, call: Call, ctx: Any, result: Any) -> dict[str, Any] | None:
        """Count the shapes of this call's arguments and result; what its span carries of them."""
        tool = self.names.tool_object(call.names_target)  # type: ignore[arg-type]
        if tool is None or self.corpus is None:
            return None
        schema, _ = self.fingerprints.of(tool)
        return self.corpus.record(
            call.names_target,  # type: ignore[arg-type]
            tool,
            schema,
            ctx.session,
            ctx.params,
            result,
            call.start,
            call.span.is_recording(),
        )
