"""What telling each side effect, request, move of the clock and tool invocation to the
harness costs.

A sealed worker's counting tools tell each effect to ``harness run`` and take its answer
as their result; its worlds tell each request their fake provider takes, each move of
their virtual clock, each stream's end and each tool invocation's start and end, one
message each, not answered (harness/runner/_ledger_pipe.py). Three figures:

- the round trip alone: a forked process tells N effects (``PipeWitness.told``), this
  one answers each from a ``HarnessLedger`` in a ``wait`` loop, as the pool does; the
  real seconds per effect;
- the one-way messages alone: a forked process tells N requests, N moves of a clock and
  N invocations' starts and ends (``PipeWitness.asked``, ``VirtualClock.advance``,
  ``PipeWitness.called`` and ``settled``), this one takes each; the real seconds per
  message, from the first sent to the last taken;
- cases whole, through ``run_contained`` (a worker, the pool's loop, the judge): the
  reference agent over a scenario of many sends (EFFECTS per case, no crash) and over
  ``scenarios/crash`` (explored crash cases, whose recordings copy the world at each
  point: a copy goes with the next message, not one of its own), with the requests the
  cases' traces hold. ``--against REV`` runs the same
  cases with the commit REV's harness, checked out beside this tree (a git worktree,
  removed afterwards), in turns, each first in every other round (a busy machine weighs
  on both alike); the best of
  ``--rounds`` of each is reported per case, with the ratio, and for the sends, what the
  difference comes to per effect and per tool invocation.

    .venv/bin/python benchmarks/bench_ledger_pipe.py [--quick]
    .venv/bin/python benchmarks/bench_ledger_pipe.py --against main [--rounds 3]
    .venv/bin/python benchmarks/bench_ledger_pipe.py --against 884a8c3  # before requests, time
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from multiprocessing import get_context
from multiprocessing.connection import Connection, wait
from pathlib import Path

from _quick import scaled
from _side_by_side import option
from _side_by_side import rounds as given_rounds
from _side_by_side import trees as side_by_side

HERE = Path(__file__).resolve().parent.parent
ROUND_TRIPS = scaled(20_000, 500)
ONE_WAY = scaled(20_000, 500)  # requests told, and as many moves of a clock
EFFECTS = scaled(200, 20)  # sends per case of the "sends" load
CALLS_PER_TURN = 10
REPEATS = scaled(10, 2)  # cases of the "sends" load per session

# Run in a fresh interpreter with one tree's harness: the seconds per case, as JSON.
CASES = '''
import json, sys, time
from pathlib import Path
from harness.runner import AgentChoice, plan_cases
from harness.runner._contain import run_contained
from harness.scenario import Scenario, load_scenario

load, spec, repeats = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
if load == "sends":
    scenario = Scenario.model_validate(spec)
    jobs = [(case, scenario) for case in plan_cases(scenario, Path("sends.yaml"))] * repeats
else:
    jobs = [(case, scenario) for path in spec for scenario in [load_scenario(path)]
            for case in plan_cases(scenario, Path(path))]
start = time.perf_counter()
results = run_contained(jobs, agent=AgentChoice(), workers=1, on_result=lambda r: None)
wall = time.perf_counter() - start
bad = [r.case.case_id for r in results if r.error]
assert not bad, bad
print(json.dumps({"cases": len(results), "wall": wall,
                  "effects": sum(sum(r.side_effects.values()) for r in results),
                  "requests": sum(len(r.trace.requests) for r in results if r.trace),
                  "invocations": sum(len(r.trace.invocations) for r in results if r.trace)}))
'''


def sends_scenario(effects: int) -> dict[str, object]:
    """A scenario whose model asks for ``effects`` distinct sends, ten to a turn."""
    turns: list[dict[str, object]] = []
    for turn in range(effects // CALLS_PER_TURN):
        calls = [{"tool": "mail", "args": {"to": "ops@example.com", "n": n}}
                 for n in range(turn * CALLS_PER_TURN, (turn + 1) * CALLS_PER_TURN)]
        turns.append({"turn": turn + 1, "calls": calls})
    turns.append({"turn": len(turns) + 1, "text": "Sent."})
    return {"name": "sends", "dialect": "openai", "seed": 1, "tools": {"mail": {"kind": "send"}},
            "model": turns, "crash": {"points": "none"},
            "expect": {"stop_state": "complete", "side_effects": {"mail": effects}}}


def _teller(conn: Connection, count: int) -> None:
    from harness.runner._ledger_pipe import PipeWitness

    witness = PipeWitness(conn)
    witness.begin_case()
    stream = witness.opened()
    for n in range(count):
        witness.told(stream, "send", tool="mail", key=f"k{n}", idempotent=False,
                     incarnation=1, at=0.0)
    conn.send_bytes(b"[]")  # done


def _one_way_teller(conn: Connection, count: int) -> None:
    from fakes import VirtualClock
    from harness.runner._ledger_pipe import PipeWitness

    witness = PipeWitness(conn)
    witness.begin_case()
    stream = witness.opened()
    clock = VirtualClock()
    clock.witness, clock.stream = witness, stream
    sent = b'{"model": "m", "messages": [{"role": "user", "content": "%d"}]}' * 20
    for n in range(count):
        witness.asked(stream, "openai", turn=n, attempt=1, incarnation=1, sent=sent,
                      now=clock.now)
        clock.advance(1.0)
        witness.called(stream, n + 1, tool="mail", kind="send", call_id=f"call_{n}",
                       arguments={"to": "ops@example.com", "n": n}, incarnation=1,
                       refused=False, after_error=False, now=clock.now)
        witness.settled(stream, n + 1, outcome="ok", result='{"sent": true}', now=clock.now)
    conn.send_bytes(b"[]")  # done


def one_way_seconds(count: int) -> float:
    """Real seconds per message told and taken, for ``count`` requests, as many moves and
    as many invocations (a start and an end each), the pool's way (``wait``, then each
    message already there)."""
    from harness.runner._ledger_pipe import HarnessLedger

    ours, theirs = get_context("fork").Pipe()
    process = get_context("fork").Process(target=_one_way_teller, args=(theirs, count))
    ledger = HarnessLedger()
    start = time.perf_counter()
    process.start()
    done = False
    while not done:
        wait([ours, process.sentinel])
        while True:
            message = ours.recv_bytes()
            if not HarnessLedger.speaks(message):
                done = True
                break
            ledger.take(message)
            if not ours.poll(0):
                break
    elapsed = time.perf_counter() - start
    process.join()
    assert ledger.account(["s", 1]).wrong is None
    assert len(ledger.account(["s", 1]).requests) == count
    assert len(ledger.account(["s", 1]).invocations) == count
    return elapsed / (4 * count)


def round_trip_seconds(count: int) -> float:
    """Real seconds per effect told and answered, the pool's way (``wait``, then answer)."""
    from harness.runner._ledger_pipe import HarnessLedger

    ours, theirs = get_context("fork").Pipe()
    process = get_context("fork").Process(target=_teller, args=(theirs, count))
    ledger = HarnessLedger()
    start = time.perf_counter()
    process.start()
    while True:
        wait([ours, process.sentinel])
        message = ours.recv_bytes()
        if not HarnessLedger.speaks(message):
            break
        answer = ledger.take(message)
        if answer is not None:
            ours.send_bytes(answer)
    elapsed = time.perf_counter() - start
    process.join()
    return elapsed / count


def cases(tree: Path, load: str, spec: object, repeats: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", CASES, load, json.dumps(spec), str(repeats)],
                          cwd=tree, env=env, capture_output=True, text=True, check=False,
                          timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"{load} in {tree} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    revision = option("--against")
    rounds = given_rounds(scaled(3, 1))
    print(f"round trip: {1e6 * round_trip_seconds(ROUND_TRIPS):.1f} µs per effect told and "
          f"answered ({ROUND_TRIPS:,} effects)")
    print(f"one way: {1e6 * one_way_seconds(ONE_WAY):.1f} µs per request, move of the clock, "
          f"or invocation's start or end told and taken ({ONE_WAY:,} of each)")
    crash = scaled(sorted(str(p) for p in (HERE / "scenarios/crash").glob("*.yaml")),
                   [str(HERE / "scenarios/crash/inspect-then-send-once.yaml")])
    loads = [("sends", sends_scenario(EFFECTS), REPEATS), ("crash", crash, 1)]
    with tempfile.TemporaryDirectory() as base, \
             side_by_side(Path(base), revision) as trees:
        for load, spec, repeats in loads:
            best: dict[str, dict[str, float]] = {}
            for turn in range(rounds):
                # Each tree first in every other round: a machine whose load changes from
                # minute to minute favours neither.
                for name, tree in list(trees.items())[::1 if turn % 2 == 0 else -1]:
                    ran = cases(tree, load, spec if load == "sends" else
                                [str(tree / Path(p).relative_to(HERE)) for p in spec],  # type: ignore[union-attr]
                                repeats)
                    if name not in best or ran["wall"] < best[name]["wall"]:
                        best[name] = ran
            report(load, best, rounds)


def report(load: str, best: dict[str, dict[str, float]], rounds: int) -> None:
    for name, ran in best.items():
        per_case = 1000 * ran["wall"] / ran["cases"]
        print(f"{load:>6} | {name:>10}: {int(ran['cases'])} cases, {int(ran['effects'])} "
              f"effects, {int(ran.get('requests', 0))} requests, "
              f"{int(ran.get('invocations', 0))} invocations, {per_case:.2f} ms per case "
              f"(best of {rounds})")
    if len(best) == 2:
        (_, old), (_, new) = best.items()
        extra = (new["wall"] - old["wall"]) / max(1, new["effects"])
        print(f"{load:>6} | ratio this tree / before: {new['wall'] / old['wall']:.3f}x per "
              f"case; {1e6 * extra:+.1f} µs per effect (or per tool invocation)")


if __name__ == "__main__":
    main()
