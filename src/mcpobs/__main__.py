"""`python -m mcpobs`: the command line."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mcpobs", description="OpenTelemetry for MCP servers and clients.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="run an instrumented shop server through every outcome and show the traces")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from mcpobs._demo import run

        return run(sys.stdout)
    return 2


if __name__ == "__main__":
    sys.exit(main())
