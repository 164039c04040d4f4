"""The argument patterns the benchmark scripts share."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def parser(doc: str | None) -> argparse.ArgumentParser:
    """A parser whose --help is the script's docstring, as written."""
    return argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)


def subset(parser: argparse.ArgumentParser, chosen: str | None, known: Sequence[str], what: str) -> tuple[str, ...]:
    """A comma-separated choice of `known` (all of them when None); an unknown name stops with one line."""
    names = tuple(chosen.split(",")) if chosen else tuple(known)
    if unknown := set(names) - set(known):
        parser.error(f"unknown {what}{', '.join(sorted(unknown))}; choose from {', '.join(known)}")
    return names


def per_call(
    parser: argparse.ArgumentParser,
    configs: Sequence[str],
    modes: Sequence[str],
    mode: str,
    rounds: int,
    only: Sequence[str],
    only_help: str | None = None,
) -> None:
    """The arguments of a per-call benchmark (overhead.py, overhead1.py): its worker, calls, rounds, choice."""
    parser.add_argument("--worker", choices=configs)
    parser.add_argument("--mode", choices=modes, default=mode)
    parser.add_argument("--calls", type=int, help="calls per round in memory (default 2000 timed, 1000 counted)")
    parser.add_argument("--http-calls", type=int, help="calls per round over HTTP (default 200)")
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--only", choices=only, help=only_help)
    parser.add_argument("--configs", help="comma-separated subset of: " + ", ".join(configs))
