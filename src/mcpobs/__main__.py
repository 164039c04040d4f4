"""`python -m mcpobs` (or `mcpobs`): the command line (`demo`, `show`, `jaeger-url`, `reference`,
`conventions`, `tail-sampling`, `canary-rules`, `contract snapshot|diff|replay`).

A mistake on the command line (a bad module, a dead URL, a missing file, no service name),
or input a command cannot read (nested too deeply, too large, of the wrong shape), is one
line on stderr and exit status 2, never a traceback and never `contract diff`'s 1 ("breaking").
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

_COMMANDS: dict[str, tuple[str, str]] = {
    "demo": (
        "run an instrumented shop server through every outcome and show the traces",
        "Runs a small shop server, instrumented, and a client that drives it through every outcome (ok, tool error, "
        "crash, caller's mistakes, pending input, progress, cancellation, a subscription). With no OTLP endpoint "
        "set, prints each trace as a tree and a metrics summary; with OTEL_EXPORTER_OTLP_ENDPOINT (or a per-signal "
        "one) set, sends each signal there and says what happened to it.",
    ),
    "reference": (
        "print the attribute and metric reference (docs/reference.md)",
        "Prints every attribute, metric, outcome and bound mcpobs emits, as Markdown, from the registry "
        "(mcpobs.semconv): the text of docs/reference.md.",
    ),
    "jaeger-url": (
        "print a Jaeger query URL for a service's recent traces",
        "Prints a Jaeger query API URL (/api/v3/traces, with the time window and limit Jaeger requires) for one "
        "service's recent traces. The Jaeger address is JAEGER_QUERY_HTTP (default 127.0.0.1:16686, as "
        "scripts/stack serves it).",
    ),
    "show": (
        "print a service's recent traces (from Jaeger) and metrics (from Prometheus), no web UI needed",
        "Prints a service's recent traces from Jaeger's query API as trees (name, kind, duration, outcome, failure "
        "boundary, progress children; a client's and a server's spans of one call in one tree) and its request "
        "metrics from Prometheus as a table, as the demo prints them. No web UI needed: it works over SSH and in "
        "CI logs. The addresses default to what scripts/stack serves and prints (JAEGER_QUERY_HTTP, "
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT).",
    ),
    "conventions": (
        "print the conventions' requirement table (docs/conventions.md)",
        "Prints the MCP semantic conventions' requirements and how mcpobs meets each, as Markdown: the text of "
        "docs/conventions.md.",
    ),
    "tail-sampling": (
        "print the collector's tail-sampling config (deploy/tail-sampling.yaml)",
        "Prints the OpenTelemetry Collector tail-sampling configuration that keeps every failed or slow MCP trace "
        "(deploy/tail-sampling.yaml), generated from the registry's outcomes.",
    ),
    "canary-rules": (
        "print the rollout gate's Prometheus rules (deploy/canary-rules.yml)",
        "Prints the Prometheus alerting rules of the canary gate (deploy/canary-rules.yml), generated from the "
        "registry: during a rollout they fire for the release whose output-validation failures, stale-catalog "
        "calls or error ratio exceed the best live release's by the margin, naming the release.",
    ),
    "contract": (
        "snapshot a server's tools, diff two snapshots, or replay live calls against a release",
        "What a release changes in the tools clients depend on: snapshot a server's tools as JSON, diff two "
        "snapshots to classify each change as breaking, additive or safe, or replay the calls clients made against "
        "a release. A server named module:attribute is imported in a child process with OpenTelemetry off "
        "(OTEL_SDK_DISABLED=true: nothing it records is exported), and a serve call it makes when imported "
        "(mcp.run(...)) is refused: its server is listed, not run.",
    ),
}


def _parser() -> argparse.ArgumentParser:
    from mcpobs import semconv
    from mcpobs._version import DISTRIBUTION, __version__

    parser = argparse.ArgumentParser(
        prog="mcpobs",
        description="OpenTelemetry for MCP servers and clients.",
        formatter_class=argparse.RawDescriptionHelpFormatter,  # the --version line stays one line
    )
    parser.add_argument(
        "--version", action="version", version=f"mcpobs {__version__} ({DISTRIBUTION}, {semconv.CONVENTION_VERSION})"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str) -> argparse.ArgumentParser:
        short, long = _COMMANDS[name]
        return commands.add_parser(name, help=short, description=long)

    command("demo")
    command("reference")
    url = command("jaeger-url")
    url.add_argument(
        "--service", default=None, help="service.name (default: OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES)"
    )
    url.add_argument("--operation", default=None, help="a span name, e.g. 'tools/call get_order_status'")
    url.add_argument("--minutes", type=float, default=60, help="how far back (default 60)")
    url.add_argument("--limit", type=int, default=20, help="at most this many traces (default 20)")
    from mcpobs._cli import show

    show.add_arguments(command("show"))
    command("conventions")
    command("tail-sampling")
    gate = command("canary-rules")
    gate.add_argument("--window", default="5m", help="rate window, a Prometheus duration (default 5m)")
    gate.add_argument("--for", dest="for_", default="5m", help="how long a release must stay above (default 5m)")
    gate.add_argument("--margin", type=float, default=0.05, help="ratio above the best release (default 0.05)")
    gate.add_argument(
        "--catalog-growth",
        type=float,
        default=0.25,
        help="fire for a release whose tool catalog (tokens) is this fraction larger than another live release's "
        "(default 0.25)",
    )
    gate.add_argument(
        "--catalog-budget",
        type=int,
        default=None,
        help="also fire for a release whose catalog is over this many tokens",
    )
    contract = command("contract")
    actions = contract.add_subparsers(dest="action", required=True, metavar="ACTION")
    snap = actions.add_parser(
        "snapshot",
        help="print a server's tools as JSON",
        description="Prints the tools a server offers (as tools/list sends them, with their fingerprints) as JSON.",
    )
    snap.add_argument(
        "target",
        help="module:attribute naming a server (or a factory; imported in a child process, telemetry off, not "
        "served), or the server's URL",
    )
    compare = actions.add_parser(
        "diff",
        help="classify each change and size the catalog; exit status 1 when anything breaks, 3 when over budget",
        description="Classifies each change from OLD to NEW as breaking, additive or safe, for old clients of the "
        "new server and new clients of an old replica, and says what each tool that grew or shrank adds to a "
        "model's context (bytes of its name, description and input schema as compact JSON; tokens) and the "
        "catalog's total before and after. Exit status 0 when nothing breaks and the catalog is within its "
        "budget, 1 when anything breaks (whatever the budget), 2 when an argument cannot be used, 3 when nothing "
        "breaks but the catalog is over --token-budget or grew past --max-growth.",
    )
    for which in ("old", "new"):
        compare.add_argument(
            which, help=f"the {which} snapshot file, or a server (module:attribute or URL) to snapshot now"
        )
    compare.add_argument(
        "--token-budget", default=None, help="fail (exit 3) when the new catalog is over this many tokens"
    )
    compare.add_argument(
        "--max-growth",
        default=None,
        help="fail (exit 3) when the catalog grew by more than this: tokens (500) or a percentage (10%%)",
    )
    compare.add_argument(
        "--encoding",
        default=None,
        help="count tokens exactly in this encoding (cl100k_base; needs the tokens extra) instead of the "
        "estimate (bytes / 4)",
    )
    _replay_parser(actions)
    return parser


def _replay_parser(actions: Any) -> None:
    replay = actions.add_parser(
        "replay",
        help="replay the tool calls clients made against a candidate release; exit status 1 when any would fail",
        description="Rebuilds the tool-call corpus (argument and result shapes, no values) from the spans "
        "instrumented servers recorded, in Jaeger or an OTLP JSON file, and checks each shape against the "
        "candidate's schemas. One line per (tool, field, reason) with its calls, client versions and an example "
        "trace. Exit status 1 when a call would fail, 2 when an argument or the trace store cannot be used. "
        "The servers must record shapes (off by default: instrument(record_shapes=True), or "
        "OTEL_PYTHON_MCP_RECORD_SHAPES=true). A module:attribute candidate is imported in a child process with "
        "OpenTelemetry off, and not served.",
    )
    replay.add_argument("candidate", help="a snapshot file, or a server (module:attribute or URL) to snapshot now")
    replay.add_argument("--jaeger", default=None, help="Jaeger's query address, e.g. http://127.0.0.1:16686")
    replay.add_argument("--service", default=None, help="the servers' service.name (with --jaeger)")
    replay.add_argument("--since", default="24h", help="how far back, e.g. 30m, 6h, 7d (default 24h)")
    replay.add_argument(
        "--from", dest="source", default=None, help="an OTLP JSON file (a collector's file exporter's) instead"
    )
    replay.add_argument("--limit", type=int, default=2000, help="traces read per tool from Jaeger (default 2000)")
    replay.add_argument("--corpus", default=None, help="also write the rebuilt corpus to this file, as JSON")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from mcpobs._cli import CommandError

    try:
        return _run(args)
    except BrokenPipeError:  # `| head` stopped reading: what it wanted was printed
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the flush at exit would fail too
        return 0
    except CommandError as error:
        print(f"{_named(args)}: {error}", file=sys.stderr)
        return 2
    except (RecursionError, MemoryError) as error:  # input past what can be read: its own line, not "breaking"
        print(
            f"{_named(args)}: the input is too large or nested too deeply to read ({type(error).__name__})",
            file=sys.stderr,
        )
        return 2
    except Exception as error:  # input of a shape no reader expected: one line, never a traceback
        from mcpobs._cli.render import printable

        print(
            f"{_named(args)}: cannot use its input ({type(error).__name__}: {printable(error, 200)})", file=sys.stderr
        )
        return 2


def _named(args: Any) -> str:
    return f"mcpobs {args.command}{' ' + args.action if args.command == 'contract' else ''}"


def _run(args: Any) -> int:
    if args.command == "demo":
        from mcpobs._cli.demo import run

        return run(sys.stdout)
    if args.command == "jaeger-url":
        from mcpobs._cli.stores.jaeger import traces_url
        from mcpobs._cli.stores.query_api import service_name

        print(traces_url(args.service or service_name(), args.operation, minutes=args.minutes, limit=args.limit))
        return 0
    if args.command == "show":
        from mcpobs._cli.show import run as show

        return show(args, sys.stdout)
    if args.command == "reference":
        from mcpobs._cli.reference import render

        sys.stdout.write(render())
        return 0
    if args.command == "conventions":
        from mcpobs._cli.conventions import render as render_conventions

        sys.stdout.write(render_conventions())
        return 0
    if args.command == "tail-sampling":
        from mcpobs._cli.tail_sampling import render as render_tail_sampling

        sys.stdout.write(render_tail_sampling())
        return 0
    if args.command == "canary-rules":
        from mcpobs._cli import CommandError
        from mcpobs._cli.canary import checked
        from mcpobs._cli.canary import render as render_canary

        problem = checked(args.window, args.for_, args.margin, args.catalog_growth, args.catalog_budget)
        if problem:
            raise CommandError(problem)
        sys.stdout.write(render_canary(args.window, args.for_, args.margin, args.catalog_growth, args.catalog_budget))
        return 0
    from mcpobs._cli import contract_diff as _contract_diff

    sys.path.insert(0, "")  # module:attribute is looked up from the current directory too
    if args.action == "replay":
        from mcpobs._cli.contract_replay import main_replay

        text, status = main_replay(
            args.candidate,
            jaeger=args.jaeger,
            service=args.service,
            since=args.since,
            source=args.source,
            limit=args.limit,
            corpus_out=args.corpus,
        )
        print(text)
        return status
    if args.action == "snapshot":
        print(_contract_diff.main_snapshot(args.target))
        return 0
    text, status = _contract_diff.main_diff(args.old, args.new, args.token_budget, args.max_growth, args.encoding)
    print(text)
    return status


if __name__ == "__main__":
    sys.exit(main())
