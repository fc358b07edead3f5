"""A turn of a long uncrashed run costs the same at turn 80 as at turn 40.

Every request carries the whole conversation again, so building it (the agent's
``_requests``), encoding it and parsing it grow with the session: that is the
protocol's own cost. Everything else the reference agent and the fakes do in a
turn must not: the agent used to decode its whole session log about five times
a turn, and the fakes scanned the whole conversation of every request (for
unpaired calls, for the turn's number, for the calls' ids). Each of those made a
long run quadratic (1,000 turns: 4.5 times the time of 500).

The measure is deterministic: the Python calls made from the agent's and the
fakes' code (``sys.setprofile`` sees each Python call and each call into C).
Twice the turns must cost about twice the calls.
``benchmarks/bench_long_run_memory.py`` prints the time of 500 and 1,000 turns.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import FrameType

from long_run import long_scenario

from harness.runner import plan_cases, run_case

ROOT = Path(__file__).resolve().parents[2]
COUNTED = ("harness/agent/", "harness/runner/", "fakes/")
# The request is the conversation: building it grows with the session by nature.
CONVERSATION = ("harness/agent/_requests.py",)


def calls_by_file(turns: int) -> Counter[str]:
    """The Python calls made from each counted file during an uncrashed ``turns``-turn run."""
    scenario = long_scenario(turns)
    case = next(c for c in plan_cases(scenario, Path("long.yaml"), None) if not c.crash)
    counts: Counter[str] = Counter()
    prefix = str(ROOT) + "/"

    def count(frame: FrameType, event: str, _arg: object) -> None:
        # A Python call counts for its caller's file, a call into C for the file making it.
        if event not in ("call", "c_call"):
            return
        caller = frame.f_back if event == "call" else frame
        name = caller.f_code.co_filename if caller is not None else ""
        if name.startswith(prefix):
            counts[name[len(prefix):]] += 1

    sys.setprofile(count)
    try:
        result = run_case(case, scenario, None)
    finally:
        sys.setprofile(None)
    assert result.passed, result
    return Counter({name: n for name, n in counts.items()
                    if name.startswith(COUNTED) and name not in CONVERSATION})


def calls_in_a_fresh_interpreter(turns: int) -> Counter[str]:
    """:func:`calls_by_file` in an interpreter of its own: what tests before it ran in
    this process (recordings of the same scenario, rendered frames, memoized answers)
    would answer part of a run and make the counts depend on the order of the tests."""
    code = ("import json, sys; sys.path[:0] = sys.argv[2:]; import test_long_run_work as t; "
            "print(json.dumps(t.calls_by_file(int(sys.argv[1]))))")
    here = Path(__file__).resolve().parent
    done = subprocess.run([sys.executable, "-c", code, str(turns), str(here), str(here.parent)],
                          capture_output=True, text=True, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return Counter(json.loads(done.stdout.splitlines()[-1]))


def test_a_turn_costs_the_agent_and_the_fakes_the_same_however_long_the_run() -> None:
    short, long = calls_in_a_fresh_interpreter(40), calls_in_a_fresh_interpreter(80)
    growth = {name: round(long[name] / max(short[name], 1), 2) for name in long
              if long[name] > 1000}
    quadratic = {name: g for name, g in growth.items() if g > 2.3}
    assert not quadratic, f"calls per file, 80 turns / 40 turns: {growth}"
    assert sum(long.values()) <= 2.2 * sum(short.values()), growth
