"""The pytest plugin's time per case: a pytest session over shipped scenarios, whole.

Each session is ``pytest SCENARIOS --harness-crash sample`` in a fresh process (collection,
planning, every case run and judged, the report), timed in wall seconds and in CPU
seconds (pytest's and every process it started: its case worker, its planning guests).
Two loads: the reference agent over ``scenarios/crash`` (its planning is the harness's
own, in pytest's process), and an agent of the user's (``--harness-agent
examples.naive_resend_agent:agent``: its import and planning runs are sealed too).

``--against REV`` measures this tree and the commit REV side by side, sessions in turns
(a busy machine weighs on both alike); the best of ``--rounds`` sessions of each is
reported, per case, with the ratio.

    .venv/bin/python benchmarks/bench_plugin_cases.py [--quick]
    .venv/bin/python benchmarks/bench_plugin_cases.py --against main [--rounds 3]
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _quick import scaled
from _side_by_side import option
from _side_by_side import rounds as given_rounds
from _side_by_side import trees as side_by_side

HERE = Path(__file__).resolve().parent.parent
USER_AGENT = "examples.naive_resend_agent:agent"
# Load: (its name, the scenarios under the tree, the agent; None: the reference agent).
LOADS = [
    ("reference agent",
     scaled(["scenarios/crash"], ["scenarios/crash/inspect-then-send-once.yaml"]), None),
    ("user's agent", scaled(["scenarios/crash/unknown-send-is-inspected.yaml",
                             "scenarios/crash/inspect-then-send-once.yaml",
                             "scenarios/crash/notes-and-mail-everywhere.yaml"],
                            ["scenarios/crash/inspect-then-send-once.yaml"]),
     USER_AGENT),
]
ITEMS = re.compile(r"(\d+) (passed|failed|skipped)")


@dataclass
class Session:
    items: int
    wall: float
    cpu: float


def session(tree: Path, scenarios: list[str], agent: str | None, folder: Path) -> Session:
    """One pytest session over ``scenarios`` of ``tree``, with ``tree``'s harness."""
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "--harness-crash", "sample", *(str(tree / s) for s in scenarios)]
    if agent is not None:
        args += ["--harness-agent", agent]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, cwd=folder, env=env, capture_output=True, text=True,
                          check=False, timeout=1800)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    items = sum(int(count) for count, _ in ITEMS.findall(done.stdout.splitlines()[-1]))
    if done.returncode not in (0, 1) or not items:
        raise SystemExit(f"pytest exited {done.returncode}:\n{done.stdout[-2000:]}"
                         f"\n{done.stderr[-2000:]}")
    return Session(items, wall, cpu)


def main() -> None:
    revision = option("--against")
    rounds = given_rounds(scaled(3, 1))
    with tempfile.TemporaryDirectory() as base, \
             side_by_side(Path(base), revision) as trees:
        folder = Path(base) / "project"
        folder.mkdir()
        (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        for name, scenarios, agent in LOADS:
            best: dict[str, Session] = {}
            for _ in range(rounds):
                for tree_name, tree in trees.items():
                    ran = session(tree, scenarios, agent, folder)
                    kept = best.get(tree_name)
                    best[tree_name] = ran if kept is None else Session(
                        ran.items, min(kept.wall, ran.wall), min(kept.cpu, ran.cpu))
            report(name, best, rounds)


def report(load: str, best: dict[str, Session], rounds: int) -> None:
    for tree_name, ran in best.items():
        print(f"{load:>15} | {tree_name:>10}: {ran.items} items, "
              f"{1000 * ran.wall / ran.items:.1f} ms wall and {1000 * ran.cpu / ran.items:.1f} "
              f"ms CPU per case (best of {rounds} sessions: {ran.wall:.2f} s wall, "
              f"{ran.cpu:.2f} s CPU)")
    if len(best) == 2:
        (_, old), (_, new) = best.items()
        print(f"{load:>15} | ratio this tree / before: {new.wall / old.wall:.2f}x wall, "
              f"{new.cpu / old.cpu:.2f}x CPU")


if __name__ == "__main__":
    main()
