"""Run the mutant catalogue against a suite and print the kill matrix.

    python -m harness.mutants                      # every mutant, scenarios/, crash cases too
    python -m harness.mutants --no-crash           # only the crash-free case of each scenario
    python -m harness.mutants --only L2 scenarios/tools
    python -m harness.mutants --first --check-determinism   # CI: each mutant's first killer

One row per mutant: the scenarios whose cases it did not pass, with the checks
that failed there. Exit 0 when every mutant is killed, 1 when one survives.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from harness.mutants._catalogue import MUTANTS
from harness.mutants._run import markdown_table, matrix, out_of_reach
from harness.scenario import load_scenario, scenario_files


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.mutants", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", type=Path, default=[Path("scenarios")])
    parser.add_argument("--no-crash", action="store_true", help="crash-free cases only")
    parser.add_argument("--only", default="", help="mutants whose name starts with this")
    parser.add_argument("--check-determinism", action="store_true",
                        help="run each case twice and judge determinism too (twice the time)")
    parser.add_argument("--first", action="store_true",
                        help="stop at each mutant's first killing case (a quick survivor check)")
    parser.add_argument("--table", action="store_true",
                        help="print the catalogue as the README's Markdown table and stop")
    args = parser.parse_args(argv)
    if args.table:
        print(markdown_table(MUTANTS))
        return 0
    chosen = [m for m in MUTANTS if m.name.startswith(args.only)]
    loaded = [(load_scenario(path), path) for path in scenario_files(args.paths)]
    found = matrix(chosen, loaded, crashes=not args.no_crash, twice=args.check_determinism,
                   first=args.first)
    width = max(len(m.name) for m in chosen)
    unreachable = {m.name: why for m in chosen if not found[m.name] and (why := out_of_reach(
        m, crashes=not args.no_crash, twice=args.check_determinism))}
    for mutant in chosen:
        kills = found[mutant.name]
        shown = "; ".join(f"{Path(s).stem} ({', '.join(c)})" for s, c in kills.items())
        mark = "killed " if kills else "not run" if mutant.name in unreachable else "SURVIVED"
        if mutant.name in unreachable:
            shown = f"needs {unreachable[mutant.name]}"
        print(f"{mutant.name:<{width}}  {mark}  {shown}")
    survivors = [m.name for m in chosen if not found[m.name] and m.name not in unreachable]
    tried = len(chosen) - len(unreachable)
    print(f"{tried - len(survivors)} of {tried} mutants killed"
          + (f"; {len(unreachable)} out of reach of these options" if unreachable else ""),
          file=sys.stderr)
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
