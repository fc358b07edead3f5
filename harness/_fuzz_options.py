"""The ``harness fuzz`` options, light to import: the command line builds its parser from
them on every start, and the pytest plugin reads ``--harness-fuzz N`` with the same rule.

The search itself (:mod:`harness.fuzz`, Hypothesis) is imported only when it runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness._errors import ConfigError
from harness._options import input_path, output_path, parse_seed, parse_target, whole_number

DEFAULT_MAX_FAULTS = 3

DEFAULT_BUDGET = 100
#: More schedules than a search could try in days: a number past it is a typing slip.
MAX_BUDGET = 1_000_000


def parse_budget(text: str) -> int:
    """A ``--budget``: how many schedules to try, a whole number from 1 to :data:`MAX_BUDGET`.

    >>> parse_budget("200")
    200
    """
    return whole_number(text, 1, MAX_BUDGET,
                        f"a whole number of schedules from 1 to {MAX_BUDGET}, such as 200")


def _count(text: str) -> int:
    return whole_number(text, 0, None, "a whole number >= 0")


def add_fuzz_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``fuzz`` subcommand's arguments."""
    fuzz = commands.add_parser(
        "fuzz", help="search fault schedules for an invariant violation; write the shrunk "
                     "schedule as a scenario")
    fuzz.add_argument("scenario", type=input_path, metavar="SCENARIO",
                      help="one scenario file: the world to fuzz")
    fuzz.add_argument("--agent", metavar="MODULE:CALLABLE",
                      help="the agent to test (default: the reference agent)")
    fuzz.add_argument("--target", action="append", type=parse_target, default=[],
                      metavar="TOOL=MODULE:FUNCTION",
                      help="the agent's own function that scenario tool TOOL stands for")
    fuzz.add_argument("--budget", type=parse_budget, default=DEFAULT_BUDGET, metavar="N",
                      help=f"schedules to try before giving up (default: {DEFAULT_BUDGET})")
    fuzz.add_argument("--out", type=output_path, default=Path("fuzz"), metavar="DIR",
                      help="folder for the repro and the example database (default: fuzz)")
    fuzz.add_argument("--seed", type=parse_seed, default=0,
                      help="seed of the search (default: 0); the same seed finds the same repro")
    fuzz.add_argument("--max-faults", type=_count, default=DEFAULT_MAX_FAULTS, metavar="N",
                      help=f"faults in one schedule (default: {DEFAULT_MAX_FAULTS})")
    fuzz.add_argument("--kind", action="append", metavar="KIND",
                      help="fuzz only this fault kind; repeatable (default: every kind)")




def kind_problem(kind: str) -> None:
    """Refuse a ``--kind`` that names no fault kind, with the kinds there are."""
    from harness.scenario import FAULT_KINDS, did_you_mean

    if kind not in FAULT_KINDS:
        raise ConfigError("--kind", kind, "a fault kind: " + ", ".join(FAULT_KINDS),
                          did_you_mean(kind, FAULT_KINDS))
