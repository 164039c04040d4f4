"""`python -m mcpobs`: the command line (`demo`, `jaeger-url`, `reference`, `conventions`, `tail-sampling`,
`canary-rules`, `contract snapshot|diff`)."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mcpobs", description="OpenTelemetry for MCP servers and clients.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="run an instrumented shop server through every outcome and show the traces")
    commands.add_parser("reference", help="print the attribute and metric reference (docs/reference.md)")
    url = commands.add_parser("jaeger-url", help="print a Jaeger query URL for a service's recent traces")
    url.add_argument("--service", default=None, help="service.name (default: OTEL_SERVICE_NAME)")
    url.add_argument("--operation", default=None, help="a span name, e.g. 'tools/call get_order_status'")
    url.add_argument("--minutes", type=float, default=60, help="how far back (default 60)")
    url.add_argument("--limit", type=int, default=20, help="at most this many traces (default 20)")
    commands.add_parser("conventions", help="print the conventions' requirement table (docs/conventions.md)")
    commands.add_parser("tail-sampling", help="print the collector's tail-sampling config (deploy/tail-sampling.yaml)")
    gate = commands.add_parser(
        "canary-rules", help="print the rollout gate's Prometheus rules (deploy/canary-rules.yml)"
    )
    gate.add_argument("--window", default="5m", help="rate window, a Prometheus duration (default 5m)")
    gate.add_argument("--for", dest="for_", default="5m", help="how long a release must stay above (default 5m)")
    gate.add_argument("--margin", type=float, default=0.05, help="ratio above the best release (default 0.05)")
    contract = commands.add_parser("contract", help="snapshot a server's tools, or diff two snapshots")
    actions = contract.add_subparsers(dest="action", required=True)
    snap = actions.add_parser("snapshot", help="print a server's tools as JSON")
    snap.add_argument("target", help="module:attribute naming a server (or a factory), or the server's URL")
    compare = actions.add_parser("diff", help="classify each change; exit status 1 when anything breaks")
    compare.add_argument("old")
    compare.add_argument("new")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from mcpobs._cli.demo import run

        return run(sys.stdout)
    if args.command == "jaeger-url":
        import os

        from mcpobs._cli.jaeger import traces_url

        service = args.service or os.environ.get("OTEL_SERVICE_NAME") or "unknown_service"
        print(traces_url(service, args.operation, minutes=args.minutes, limit=args.limit))
        return 0
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
        from mcpobs._cli.canary import checked
        from mcpobs._cli.canary import render as render_canary

        problem = checked(args.window, args.for_, args.margin)
        if problem:
            parser.error(problem)
        sys.stdout.write(render_canary(args.window, args.for_, args.margin))
        return 0
    from mcpobs._cli import contract_diff as _contract_diff

    if args.action == "snapshot":
        sys.path.insert(0, "")  # module:attribute is looked up from the current directory too
        print(_contract_diff.main_snapshot(args.target))
        return 0
    text, status = _contract_diff.main_diff(args.old, args.new)
    print(text)
    return status


if __name__ == "__main__":
    sys.exit(main())
