"""The canary gate: Prometheus alerting rules that compare the releases of one server while it rolls out.

During a rolling deploy two or three releases serve side by side. Each rule computes a ratio
per release and fires for the release whose ratio is `margin` above the best release's:
output-validation failures seen by clients (a release broke the schema a client holds), calls
made with a stale catalog (clients hold another schema than the release serves), and the
server's error ratio. With one release live nothing is compared and nothing fires: this is a
gate for rollouts, not an error alert. Every alert carries the release
(`mcpobs_server_version`, and `release`) in its labels.

The expressions are built here once, from `mcpobs.semconv`, for the rules and the rollout
dashboard alike. `python -m mcpobs canary-rules > deploy/canary-rules.yml` regenerates the
rules Prometheus loads (deploy/prometheus.yml); a test fails when the committed file differs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mcpobs import semconv as S

REQUESTS = S.prometheus_name(S.SERVER_REQUESTS)
CLIENT_REQUESTS = S.prometheus_name(S.CLIENT_REQUESTS)
STALE = S.prometheus_name(S.STALE_CALLS)
CATALOG_TOKENS = S.prometheus_name(S.CATALOG_SIZE_TOKENS)

RELEASE = S.prometheus_label(S.SERVER_VERSION)
CLIENT_VERSION = S.prometheus_label(S.CLIENT_VERSION)
CATALOG = S.prometheus_label(S.CATALOG_RELEASE)
TOOL = S.prometheus_label(S.GEN_AI_TOOL_NAME)
METHOD = S.prometheus_label(S.MCP_METHOD_NAME)
OUTCOME = S.prometheus_label(S.OUTCOME)
ERROR_TYPE = S.prometheus_label(S.ERROR_TYPE)

TOOLS_CALL = f'{METHOD}="tools/call"'
VALIDATION = f'{ERROR_TYPE}="{S.OUTPUT_VALIDATION}"'
ERRORS = f'{OUTCOME}=~"{"|".join(sorted(o.value for o in S.ERROR_OUTCOMES))}"'
COMPLETED = f'{OUTCOME}=~"{"|".join(sorted(o.value for o in S.LATENCY_OUTCOMES | S.ERROR_OUTCOMES))}"'

DEFAULT_WINDOW = "5m"
DEFAULT_FOR = "5m"
DEFAULT_MARGIN = 0.05
DEFAULT_CATALOG_GROWTH = 0.25


def _matchers(*parts: str) -> str:
    return ", ".join(p for p in parts if p)


def rate(metric: str, matchers: str, by: str, window: str) -> str:
    selector = f"{metric}{{{matchers}}}" if matchers else metric
    return f"sum by ({by}) (rate({selector}[{window}]))"


def ratio(numerator: tuple[str, str], denominator: tuple[str, str], by: str, window: str) -> str:
    """numerator / denominator per `by` group; a group with traffic but no numerator is 0, not absent."""
    num = rate(*numerator, by, window)
    den = rate(*denominator, by, window)
    return f"({num} or {den} * 0) / {den}"


def validation_ratio(window: str, select: str = "") -> str:
    """Client tools/call results that failed output validation, over all, per tool and answering release."""
    calls = _matchers(select, TOOLS_CALL)
    return ratio(
        (CLIENT_REQUESTS, _matchers(calls, VALIDATION)), (CLIENT_REQUESTS, calls), f"{TOOL}, {RELEASE}", window
    )


def stale_ratio(window: str, select: str = "") -> str:
    """tools/call requests made with a schema the release does not serve, over all, per service and release."""
    return ratio((STALE, select), (REQUESTS, _matchers(select, TOOLS_CALL)), f"job, {RELEASE}", window)


def error_ratio(window: str, select: str = "") -> str:
    """The server's tool and server errors over completed requests, per service and release."""
    return ratio(
        (REQUESTS, _matchers(select, ERRORS)), (REQUESTS, _matchers(select, COMPLETED)), f"job, {RELEASE}", window
    )


def client_error_ratio(window: str, select: str = "") -> str:
    """Errors clients received (a failed validation included), over their calls, per answering release."""
    return ratio((CLIENT_REQUESTS, _matchers(select, ERRORS)), (CLIENT_REQUESTS, select), f"{RELEASE}", window)


def compatibility_matrix(window: str, select: str = "") -> str:
    """Output-validation failure ratio per client version x server release: the rollout's matrix."""
    calls = _matchers(select, TOOLS_CALL)
    return ratio(
        (CLIENT_REQUESTS, _matchers(calls, VALIDATION)),
        (CLIENT_REQUESTS, calls),
        f"{CLIENT_VERSION}, {RELEASE}",
        window,
    )


def catalog_tokens(select: str = "") -> str:
    """Each live release's tool catalog in tokens (`mcpobs.catalog.size_tokens`), per service."""
    selector = f"{CATALOG_TOKENS}{{{select}}}" if select else CATALOG_TOKENS
    return f"max by (job, {RELEASE}) ({selector})"


def catalog_grown(growth: float, select: str = "") -> str:
    """The releases whose catalog is more than `growth` (a fraction) larger than the smallest live release's."""
    per_release = catalog_tokens(select)
    return f"{per_release} > on (job) group_left () (min by (job) ({per_release}) * {1 + growth:g})"


def catalog_over(budget: int, select: str = "") -> str:
    """The releases whose catalog is over `budget` tokens."""
    return f"{catalog_tokens(select)} > {budget}"


def above_the_best_release(per_release: str, group: str, margin: float) -> str:
    """The releases whose ratio exceeds the best release's (in the same `group`) by `margin`."""
    return f"{per_release} > on ({group}) group_left () (min by ({group}) ({per_release}) + {margin})"


@dataclass(frozen=True)
class Rule:
    alert: str
    group: str
    expr: str
    summary: str
    alert_expr: str = ""
    """The whole alerting expression, when it is not `expr` compared with the best release's."""


def rules(
    window: str = DEFAULT_WINDOW,
    margin: float = DEFAULT_MARGIN,
    catalog_growth: float = DEFAULT_CATALOG_GROWTH,
    catalog_budget: int | None = None,
) -> tuple[Rule, ...]:
    catalog = (
        Rule(
            "MCPReleaseCatalogGrowth",
            "job",
            catalog_tokens(),
            f"Release {{{{ $labels.{RELEASE} }}}} of {{{{ $labels.job }}}}: its tool catalog is "
            f"{{{{ $value }}}} tokens, over {catalog_growth:.0%} more than another live release's "
            "(`mcpobs contract diff` names the tools that grew)",
            catalog_grown(catalog_growth),
        ),
    )
    if catalog_budget is not None:
        catalog += (
            Rule(
                "MCPReleaseCatalogOverBudget",
                "job",
                catalog_tokens(),
                f"Release {{{{ $labels.{RELEASE} }}}} of {{{{ $labels.job }}}}: its tool catalog is "
                f"{{{{ $value }}}} tokens, over the budget of {catalog_budget}",
                catalog_over(catalog_budget),
            ),
        )
    compared = (
        Rule(
            "MCPReleaseBreaksClientValidation",
            TOOL,
            validation_ratio(window),
            f"Release {{{{ $labels.{RELEASE} }}}}: clients reject {{{{ $value | humanizePercentage }}}} of "
            f"{{{{ $labels.{TOOL} }}}} results against the output schema they hold, more than another release",
        ),
        Rule(
            "MCPReleaseStaleCatalogs",
            "job",
            stale_ratio(window),
            f"Release {{{{ $labels.{RELEASE} }}}} of {{{{ $labels.job }}}}: {{{{ $value | humanizePercentage }}}} "
            "of tool calls come with a schema it does not serve, more than another release",
        ),
        Rule(
            "MCPReleaseErrorRatio",
            "job",
            error_ratio(window),
            f"Release {{{{ $labels.{RELEASE} }}}} of {{{{ $labels.job }}}}: error ratio "
            "{{ $value | humanizePercentage }}, above another release's",
        ),
    )
    return compared + catalog


_DURATION = re.compile(r"^([0-9]+(ms|s|m|h|d|w|y))+$")


def checked(
    window: str,
    for_: str,
    margin: float,
    catalog_growth: float = DEFAULT_CATALOG_GROWTH,
    catalog_budget: int | None = None,
) -> str | None:
    """What is wrong with these settings, said so it can be fixed; None when they are usable."""
    if not catalog_growth > 0:
        return f"--catalog-growth {catalog_growth} must be a fraction above 0, e.g. 0.25 for a quarter more tokens"
    if catalog_budget is not None and catalog_budget <= 0:
        return f"--catalog-budget {catalog_budget} must be a number of tokens above 0, e.g. 8000"
    for option, value in (("--window", window), ("--for", for_)):
        if not _DURATION.match(value):
            return f"{option} {value!r} is not a Prometheus duration; write e.g. 30s, 5m or 1h30m"
    if not 0 < margin < 1:
        return f"--margin {margin} must be a ratio between 0 and 1, e.g. 0.05 for five points"
    return None


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def render(
    window: str = DEFAULT_WINDOW,
    for_: str = DEFAULT_FOR,
    margin: float = DEFAULT_MARGIN,
    catalog_growth: float = DEFAULT_CATALOG_GROWTH,
    catalog_budget: int | None = None,
) -> str:
    budget = f", or is over {catalog_budget} tokens" if catalog_budget is not None else ""
    lines = [
        "# The mcpobs canary gate: during a rollout, fire for the release whose output-validation",
        "# failures, stale-catalog calls or error ratio exceed the best live release's by "
        f"{margin:.0%} (over {window}, for {for_}),",
        f"# or whose tool catalog is over {catalog_growth:.0%} larger than another live release's{budget}.",
        "# Generated from src/mcpobs/semconv.py by `python -m mcpobs canary-rules`; do not edit by hand.",
        "# Loaded by deploy/prometheus.yml (scripts/stack, docker compose); docs/production.md explains it.",
        "groups:",
        "  - name: mcpobs-canary",
        "    rules:",
    ]
    for rule in rules(window, margin, catalog_growth, catalog_budget):
        expr = rule.alert_expr or above_the_best_release(rule.expr, rule.group, margin)
        lines += [
            f"      - alert: {rule.alert}",
            f"        expr: {_quoted(expr)}",
            f"        for: {for_}",
            "        labels:",
            "          severity: page",
            f"          release: '{{{{ $labels.{RELEASE} }}}}'",
            "        annotations:",
            f"          summary: {_quoted(rule.summary)}",
        ]
    return "\n".join(lines) + "\n"
