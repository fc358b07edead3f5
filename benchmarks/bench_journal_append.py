"""Journal appends per second on RealDisk, and fsyncs per tool call against the floor.

The floor: three records must be durable before the next step of a call
(intent before start, execution_started before the tool runs, result before the
model hears "done"), so three file fsyncs per call; folder fsyncs are paid once
per incarnation. Compared with a naive append (open, write, close; no fsync).

    .venv/bin/python benchmarks/bench_journal_append.py [--quick]
"""

from __future__ import annotations

import os
import tempfile
import time

from _quick import scaled

from harness.agent._disk import RealDisk
from harness.agent._journal import ToolJournal
from harness.ports import LoopClock, ToolInvocation

CALLS = scaled(300, 10)


class _ZeroClock(LoopClock):
    def now(self) -> float:
        return 0.0


def _journal_run(folder: str) -> tuple[float, int, int]:
    counts = {"fsync": 0}
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        counts["fsync"] += 1
        real_fsync(fd)

    os.fsync = counting_fsync
    try:
        journal = ToolJournal.open(
            RealDisk(),
            f"{folder}/state/journal.jsonl",
            run_id="run",
            clock=_ZeroClock(),
            root=folder,
        )
        started = time.perf_counter()
        for n in range(CALLS):
            call = ToolInvocation(f"turn_{n}", f"call_{n}", "append", {"text": f"line {n}"})
            execution = journal.record_intent(call)
            journal.record_started(execution)
            journal.record_result(execution, "returned", {"ok": True})
        return time.perf_counter() - started, CALLS * 3, counts["fsync"]
    finally:
        os.fsync = real_fsync


def _naive_run(folder: str, lines: int) -> float:
    path = f"{folder}/naive.jsonl"
    line = b'{"seq":1,"state":"intent","executionId":"exec_0123456789ab","callId":"call_1"}\n'
    started = time.perf_counter()
    for _ in range(lines):
        with open(path, "ab") as f:
            f.write(line)
    return time.perf_counter() - started


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        elapsed, records, fsyncs = _journal_run(folder)
        naive = _naive_run(folder, records)
    rate, naive_rate = records / elapsed, records / naive
    print(f"durable journal: {records} appends in {elapsed:.3f} s = {rate:.0f} appends/s")
    ratio = naive_rate / rate
    print(f"naive append (no fsync): {naive_rate:.0f} appends/s; naive/durable = {ratio:.1f}x")
    print(
        f"fsyncs: {fsyncs} for {CALLS} calls = {fsyncs / CALLS:.2f} per call "
        f"(floor: 3 file fsyncs per call; {fsyncs - 3 * CALLS} folder fsyncs once per incarnation)"
    )


if __name__ == "__main__":
    main()
