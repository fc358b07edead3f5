"""The ``harness`` command line: a thin layer over the library."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from harness import __version__
from harness._errors import HarnessError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="harness",
        description="Chaos harness for LLM agents: fake providers, faults, crash recovery checks.",
    )
    parser.add_argument("--version", action="version", version=f"harness {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser(
        "demo", help="run every streaming fault against the reference stream client"
    )
    demo.add_argument("--dialect", choices=["openai", "anthropic"], action="append",
                      help="limit to one dialect (repeatable; default: both)")
    demo.add_argument("--seed", type=int, default=0, help="run seed (default: 0)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return _dispatch(args)
    except HarnessError as error:
        print(f"harness: error: {error}", file=sys.stderr)
        return 2


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "demo":
        from harness._demo import demo

        return demo(args.dialect or ["openai", "anthropic"], args.seed)
    raise AssertionError(f"unhandled command {args.command!r}")
