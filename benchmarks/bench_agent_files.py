"""An unchanged agent's file I/O through pyfakefs, against the crash disk's Disk port.

Once per process, the first ``active()``: pyfakefs scans every loaded module
(the SDKs imported, as an agent's run has them) and caches what it found.

Per incarnation (the crash runner starts one per crash case, and one more per
restart), three figures, each as the median of several rounds:

* entering and leaving ``AgentFiles.active()`` with an empty body: the pyfakefs
  module scan (from its cache), the fake file system rebuilt from the disk, the
  patches set and removed;
* one incarnation's work, a state save with the atomic pattern
  (``tempfile`` + fsync + ``os.replace`` + folder fsync) and three fsynced
  journal appends, written as an unchanged agent writes it (``open``,
  ``os.fsync`` …) inside ``active()``;
* the same work on the Disk port (``open_append``, ``replace``, ``fsync_dir``) as
  the reference agent does it, with no interception: the ratio is the price of
  testing an agent unchanged.

Times are CPU seconds of this process (``time.process_time``): the benchmark
shares its cores, and CPU time is what a crash run pays.

    .venv/bin/python benchmarks/bench_agent_files.py [--quick]
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable

from _quick import scaled

from fakes import CrashDisk
from harness.intercept import AgentFiles

INCARNATIONS = scaled(200, 5)
ROUNDS = scaled(5, 1)
STATE = {"turn": 3, "messages": ["hello", "world"] * 20}


def _agent_incarnation() -> None:
    """What an unchanged agent writes in one incarnation, in its own words."""
    with tempfile.NamedTemporaryFile("w", dir=".", delete=False) as tmp:
        json.dump(STATE, tmp)
        tmp.flush()
        os.fsync(tmp.fileno())
    os.replace(tmp.name, "state.json")
    folder = os.open(".", os.O_RDONLY)
    os.fsync(folder)
    os.close(folder)
    with open("journal.jsonl", "a") as journal:
        for n in range(3):
            journal.write(json.dumps({"seq": n}) + "\n")
            journal.flush()
            os.fsync(journal.fileno())


def _port_incarnation(disk: CrashDisk) -> None:
    """The same durable work on the Disk port, as the reference agent writes it."""
    view = disk.view()
    with view.open_append("/agent/state.json.tmp") as tmp:
        tmp.write(json.dumps(STATE).encode())
        tmp.fsync()
    view.replace("/agent/state.json.tmp", "/agent/state.json")
    view.fsync_dir("/agent")
    with view.open_append("/agent/journal.jsonl") as journal:
        for n in range(3):
            journal.write((json.dumps({"seq": n}) + "\n").encode())
            journal.fsync()


def _per_incarnation(run: Callable[[int], None], disk: CrashDisk) -> float:
    """Median seconds per incarnation over ``ROUNDS`` rounds of ``INCARNATIONS``."""
    rounds = []
    for _ in range(ROUNDS):
        started = time.process_time()
        for _ in range(INCARNATIONS):
            run(disk.incarnations.current)
            disk.restart()
        rounds.append((time.process_time() - started) / INCARNATIONS)
    return statistics.median(rounds)


def _first_activation(files: AgentFiles) -> float:
    import anthropic  # noqa: F401 - loaded, as in an agent's run: the scan sees them
    import httpx  # noqa: F401
    import openai  # noqa: F401

    started = time.process_time()
    with files.active(files.disk.incarnations.current):
        pass
    files.disk.restart()
    return time.process_time() - started


def main() -> None:
    disk = CrashDisk()
    files = AgentFiles(disk)
    first = _first_activation(files)

    def empty(generation: int) -> None:
        with files.active(generation):
            pass

    def agent(generation: int) -> None:
        with files.active(generation):
            _agent_incarnation()

    port_disk = CrashDisk()
    port_disk.make_durable_folders("/agent")

    enter_leave = _per_incarnation(empty, disk)
    before = len(disk.points)
    unchanged = _per_incarnation(agent, disk)
    points = (len(disk.points) - before) // (INCARNATIONS * ROUNDS)
    reference = _per_incarnation(lambda _generation: _port_incarnation(port_disk), port_disk)
    print(f"first active() in the process (module scan, SDKs loaded): {first * 1e3:.1f} ms")
    print(f"enter + leave active(), empty body: {enter_leave * 1e3:.2f} ms per incarnation")
    print(
        f"unchanged agent (open/os/tempfile via pyfakefs): {unchanged * 1e3:.2f} ms "
        f"per incarnation, {points} persistence points each"
    )
    print(f"Disk port, same work: {reference * 1e3:.3f} ms per incarnation")
    print(f"unchanged / Disk port = {unchanged / reference:.0f}x")


if __name__ == "__main__":
    main()
