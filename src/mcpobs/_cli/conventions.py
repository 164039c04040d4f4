"""Render docs/conventions.md from the registry's requirement table.

`python -m mcpobs conventions > docs/conventions.md` regenerates it; a test fails when the
committed file differs from what this renders. Each row of the table is also checked against
real telemetry (tests/test_conformance.py), so the page says what mcpobs does.
"""

from __future__ import annotations

from mcpobs import semconv as S
from mcpobs._cli.markdown import row as _row


def _item(item: str) -> str:
    spans = (S.SPAN_NAME, S.SPAN_KIND, S.SPAN_STATUS, S.PROPAGATION, S.INSTRUMENT)
    return item if item in spans else f"`{item}`"


_INTRO = """\
# The pinned conventions, and how mcpobs conforms to them

<!-- Generated from src/mcpobs/semconv.py by `python -m mcpobs conventions`; do not edit by hand. -->

Every name mcpobs emits is in one module, `mcpobs.semconv`. It pins:

- `CONVENTION_VERSION`: the OpenTelemetry semantic conventions for MCP that mcpobs follows
  (today `{version}`, status *{status}*), with `CONVENTION_SOURCE`.
- the names themselves: every attribute and metric name the `opentelemetry-semantic-conventions`
  package defines is imported from it (a renamed constant breaks the build, not a dashboard);
  the registry spells only mcpobs's own `mcpobs.*` names and the metrics SDK's
  `{overflow}`.
- `SCHEMA_URL`: the schema URL the tracer and meter carry, `{schema}`.
- `REQUIREMENTS`: the conventions' requirement levels item by item, for each span kind and
  metric, with what mcpobs emits; the table below is generated from it.
- `DEVIATIONS`: where mcpobs departs from or extends the conventions, and why.

The conventions have moved repository once and the SDK's own middleware is marked provisional,
so an SDK release can rename an attribute and empty a dashboard without an error. mcpobs
guards against that in four ways:

1. **One place.** Code, docs (`docs/reference.md`, this page) and dashboards (`dashboards/*.json`)
   are generated from or checked against the registry; tests fail when either is stale, and a
   test fails when a name is spelled anywhere else in the package.
2. **The official package.** `tests/test_conformance.py` reads the package's MCP attribute and
   metric definitions: every name the registry calls a convention name must be defined there,
   every MCP name defined there must be in the registry, and the schema URL must be one it publishes.
3. **Every row checked.** The same test runs one real conversation in process, over Streamable
   HTTP and over stdio (handshake-era and 2026-07-28) and checks each row of the table below
   against the spans and metric points both sides recorded.
4. **Dashboards proven on real data.** The end-to-end suite runs every PromQL expression of
   every committed dashboard against a real Prometheus fed by an instrumented server, and fails
   on any that returns nothing.

## Upgrading

1. Bump `mcp`, `opentelemetry-semantic-conventions` (or the pinned conventions) in a branch and
   run `scripts/test`.
2. If the conventions renamed something, the import in `semconv.py` fails or the conformance
   test names the row; change `semconv.py` only, regenerate (`python -m mcpobs reference >
   docs/reference.md`, `python -m mcpobs conventions > docs/conventions.md`, the dashboards)
   and update `CONVENTION_VERSION`.
3. The tests tell you what is stale; dashboards re-run against real data in the e2e suite.
"""


def render() -> str:
    rows = S.REQUIREMENTS
    deviating = sum(1 for r in rows if r.deviation)
    lines = [
        _INTRO.format(
            version=S.CONVENTION_VERSION,
            status=S.CONVENTION_STATUS,
            schema=S.SCHEMA_URL,
            overflow=S.OTEL_METRIC_OVERFLOW,
        ),
        "## Requirement levels, item by item",
        "",
        f"From `docs/gen-ai/mcp.md` of semantic-conventions-genai (commit `{S.CONVENTION_DOC_COMMIT[:12]}`). "
        f"{len(rows)} items: {len(rows) - deviating} conform, {deviating} deviate (the reason is given). "
        "`tests/test_conformance.py` checks every row against what mcpobs records. A span's name, kind "
        "and status are SHOULDs of the conventions, listed as recommended.",
    ]
    signal = None
    for row in rows:
        if row.signal != signal:
            signal = row.signal
            title = signal if signal in (S.SERVER_SPAN, S.CLIENT_SPAN) else f"`{signal}`"
            lines += [
                "",
                f"### {title[0].upper() + title[1:]}",
                "",
                _row("item", "level", "when", "mcpobs emits", "deviation and reason"),
                _row("---", "---", "---", "---", "---"),
            ]
        lines.append(_row(_item(row.item), row.level.value, row.condition, row.emitted, row.deviation or "conforms"))
    lines += ["", "## Other departures", ""]
    lines += [f"- **{what}**: {why}" for what, why in S.GENERAL_DEVIATIONS]
    return "\n".join(lines) + "\n"
