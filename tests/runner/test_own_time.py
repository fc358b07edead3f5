"""The real-time limits read a process's own time: a loaded machine's queue for a CPU
does not count, a sleep or a blocking call does (harness.runner._own_time)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from harness.runner._own_time import OwnTime


@pytest.mark.system  # system tier: real processes burning every CPU
def test_time_waiting_for_a_cpu_is_not_the_processes_own_but_a_sleep_is() -> None:
    burn = [sys.executable, "-c", "while True: pass"]
    # Three burners per CPU beside a busy child: it waits for a CPU most of the time.
    burners = [subprocess.Popen(burn) for _ in range(3 * (os.cpu_count() or 2))]
    busy = subprocess.Popen(burn)
    asleep = subprocess.Popen(["sleep", "30"])
    try:
        busy_own, asleep_own = OwnTime(busy.pid), OwnTime(asleep.pid)
        started = time.monotonic()
        time.sleep(1.5)
        real = time.monotonic() - started
        assert busy_own.seconds() < 0.75 * real   # it ran at most its share of a CPU
        assert asleep_own.seconds() >= 0.9 * real  # blocked on its own timer: all its own
    finally:
        for process in (*burners, busy, asleep):
            process.kill()
            process.wait()


def test_a_process_that_cannot_be_seen_has_real_time() -> None:
    own = OwnTime(None)
    time.sleep(0.01)  # real time is what is measured here; no verdict depends on it
    assert own.seconds() >= 0.01
