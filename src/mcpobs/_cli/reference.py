"""Render docs/reference.md from the registry, so the reference can never drift from the code.

`python -m mcpobs reference > docs/reference.md` regenerates it; a test fails when the
committed file differs from what this renders.
"""

from __future__ import annotations

from mcpobs import semconv as S
from mcpobs._cli.markdown import row as _row


def render() -> str:
    lines = [
        "# Reference: every name mcpobs emits",
        "",
        "<!-- Generated from src/mcpobs/semconv.py by `python -m mcpobs reference`; do not edit by hand. -->",
        "",
        f"Pinned to **{S.CONVENTION_NAME}, {S.CONVENTION_VERSION}** (status: {S.CONVENTION_STATUS}),",
        f"<{S.CONVENTION_SOURCE}>. Tracer and meter schema URL: `{S.SCHEMA_URL}`.",
        f"Instrumentation scope: `{S.INSTRUMENTATION_NAME}`.",
        "",
        f"## Outcomes (`{S.OUTCOME}`)",
        "",
        _row("outcome", "span status", S.ERROR_TYPE, "latency sample", "counts against error ratio"),
        _row("---", "---", "---", "---", "---"),
    ]
    for outcome in S.Outcome:
        error = outcome in S.ERROR_OUTCOMES
        error_type = {
            S.Outcome.TOOL_ERROR: f"`{S.TOOL_ERROR}`",
            S.Outcome.SERVER_ERROR: f"JSON-RPC code; `{S.TOOL_ERROR}` for a tool that raised; else exception class",
        }.get(outcome, "none")
        lines.append(
            _row(
                f"`{outcome.value}`",
                "ERROR" if error else "UNSET",
                error_type,
                "yes" if outcome in S.LATENCY_OUTCOMES else "no",
                "yes" if error else "no",
            )
        )
    lines += [
        "",
        f"## Failure boundaries (`{S.FAILURE_BOUNDARY}`)",
        "",
        "Set on every request that failed (`tool_error`, `server_error`, `client_error`); the values, "
        "in the order a request meets them: " + ", ".join(f"`{b.value}`" for b in S.Boundary) + ".",
        "",
        "## Attributes",
        "",
        _row("name", "origin", "on", "meaning"),
        _row("---", "---", "---", "---"),
    ]
    for spec in sorted(S.ATTRIBUTES.values(), key=lambda a: (a.origin != "convention", a.name)):
        lines.append(_row(f"`{spec.name}`", spec.origin, spec.where, spec.brief))
    lines += [
        "",
        "## Optional attribute groups",
        "",
        f"Each can be left off request spans: `instrument(omit_attributes=[...])` or `{S.OMIT_ATTRIBUTES_ENV}`",
        "(comma-separated). The server/discover and initialize spans keep the `peer` group; the metrics keep",
        "their labels either way.",
        "",
        _row("group", "attributes", "why on every request span, and where the facts remain"),
        _row("---", "---", "---"),
    ]
    for group in S.ATTRIBUTE_GROUPS.values():
        lines.append(_row(f"`{group.name}`", ", ".join(f"`{a}`" for a in group.attributes), group.why))
    lines += ["", "## Metrics", "", _row("name", "instrument", "unit", "origin", "attributes", "meaning")]
    lines.append(_row("---", "---", "---", "---", "---", "---"))
    for metric in S.METRICS.values():
        attrs = ", ".join(f"`{a}`" for a in metric.attributes) or "none"
        lines.append(
            _row(f"`{metric.name}`", metric.instrument, f"`{metric.unit}`", metric.origin, attrs, metric.brief)
        )
    lines += [
        "",
        f"Duration histograms use the conventions' buckets (seconds): {', '.join(map(str, S.DURATION_BUCKETS))}.",
        "",
        "## Bounds",
        "",
        _row("what", "bound"),
        _row("---", "---"),
        _row(
            "any string attribute value",
            f"{S.DEFAULT_MAX_ATTRIBUTE_LENGTH} characters (`max_attribute_length`), valid UTF-8 "
            "(a lone surrogate becomes U+FFFD)",
        ),
        _row("span status description", f"{S.MAX_STATUS_DESCRIPTION} characters, valid UTF-8"),
        _row("progress spans per operation", f"{S.DEFAULT_MAX_PROGRESS_SPANS} (`max_progress_spans`)"),
        _row("captured arguments or results", f"{S.DEFAULT_MAX_CONTENT_LENGTH} characters (`max_content_length`)"),
        _row("names learned from a lowlevel server's listings", str(S.MAX_LEARNED_NAMES)),
        _row(
            "tool and prompt names a client uses (names its sessions listed, across sessions)",
            f"{S.MAX_LEARNED_NAMES}, each at most {S.MAX_NAME_LENGTH} characters; the rest `{S.OTHER}`",
        ),
        _row(
            "a tool or prompt name in a span name or a metric label (the server's own registered names included)",
            f"{S.MAX_TARGET_LENGTH} characters: a longer one is its first {S.MAX_TARGET_LENGTH - 9}, `\u2026` and "
            "8 hex characters of its SHA-256",
        ),
        _row("cancellation reason", f"{S.MAX_REASON_LENGTH} characters"),
        _row("publish contexts kept per listen stream", str(S.MAX_NOTED_PUBLISHES)),
        _row(
            f"subscription span names, `{S.SUBSCRIPTION_EVENTS.name}` series",
            f"{2 * len(S.SubscriptionEvent)} (publish and deliver per event kind; URIs only as attributes)",
        ),
        _row("unregistered tool, prompt, method or version", f"recorded as `{S.OTHER}` in names and labels"),
        _row(
            "error codes outside JSON-RPC, MCP and the SDKs",
            f"recorded as `{S.OTHER}` in `{S.ERROR_TYPE}` and in labels ({len(S.KNOWN_ERROR_CODES)} codes kept)",
        ),
        "",
        "## Where mcpobs departs from the pinned conventions",
        "",
    ]
    for what, why in S.DEVIATIONS:
        lines.append(f"- **{what}**: {why}")
    return "\n".join(lines) + "\n"
