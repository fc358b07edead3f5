"""L2:path: two writes of one path asked for together never run side by side (seed 002
§19.5), judged from the invocations' start and end times."""

from __future__ import annotations

from dataclasses import replace

import pytest
from reference_traces import reference_trace

from harness.agent import Discipline
from harness.checks._path_queue import check_path_queue
from harness.mutants import Kill
from harness.mutants._build import reference
from harness.mutants._run import run_kill
from harness.trace import Trace

SCENARIO = "scenarios/tools/writes-of-one-path-queue.yaml"


@pytest.fixture(scope="module")
def queued() -> Trace:
    return reference_trace(SCENARIO, "L2:path")


def _edits(trace: Trace) -> list[tuple[str, float, float | None]]:
    return [(str(i.arguments["path"]), i.started_at, i.ended_at) for i in trace.invocations
            if i.tool == "edit"]


def test_the_reference_agent_queues_the_two_edits_of_one_file(queued: Trace) -> None:
    verdict = check_path_queue(queued)
    assert verdict is not None
    assert verdict.status == "pass", verdict
    # notes.md twice, one after the other; todo.md beside the first.
    (first, start, end), (other, other_start, _), (second, second_start, _) = _edits(queued)
    assert (first, other, second) == ("notes.md", "todo.md", "./notes.md")
    assert other_start == start
    assert second_start == end


def test_running_them_side_by_side_fails() -> None:
    unqueued = reference(discipline=Discipline(queue_writes_by_path=False))
    result = run_kill(Kill(SCENARIO, "L2:path"), unqueued)
    failed = {v.invariant: v for v in result.failed_verdicts}
    assert "L2:path" in failed, result.failed_verdicts
    assert "edit call" in failed["L2:path"].message
    assert "(notes.md) ran" in failed["L2:path"].message
    # L2 alone does not see it: the tool is declared safe to run beside others.
    assert "L2" not in failed


def test_writes_that_took_no_time_cannot_show_an_overlap(queued: Trace) -> None:
    instant = tuple(replace(i, ended_at=i.started_at) for i in queued.invocations)
    verdict = check_path_queue(replace(queued, invocations=instant))
    assert verdict is not None
    assert verdict.status == "unknown"


def test_no_verdict_without_two_writes_of_one_path_in_one_answer(queued: Trace) -> None:
    # Other paths: nothing to queue.
    apart = tuple(replace(i, arguments={**i.arguments, "path": f"file{i.seq}.md"})
                  for i in queued.invocations)
    assert check_path_queue(replace(queued, invocations=apart)) is None
    # The same path, but asked for in answers of their own (a scenario's later turns).
    alone = tuple(replace(r, calls=r.calls[:1]) for r in queued.requests)
    assert check_path_queue(replace(queued, requests=alone)) is None
    # Reads change nothing.
    reads = tuple(replace(i, kind="read") for i in queued.invocations)
    assert check_path_queue(replace(queued, invocations=reads)) is None
