"""The typed record views read every record the reference agent writes, under its real keys.

A view that names a key the writer spells otherwise would fail only at restore;
here every record of a viewed kind from shipped scenarios (and the guard and the
interrupted-compaction writers) goes through its view.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from fakes import VirtualClock
from harness.agent import ReferenceAgent
from harness.agent._compaction import close_interrupted
from harness.agent._log_records import (
    BreakerRecord,
    CompactionEndRecord,
    CompactionStartRecord,
    GoalRecord,
    GuardRecord,
    RecoveryRecord,
    SessionHeader,
    StopRecord,
    TurnEndRecord,
    VerificationRecord,
    cleared_of,
)
from harness.agent._session_log import SessionLog
from harness.runner import World, task_for
from harness.scenario import load_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
VIEWS: dict[str, Callable[[Mapping[str, Any]], object]] = {
    "session": SessionHeader.from_body,
    "guard": GuardRecord.from_body,
    "turn_end": TurnEndRecord.from_body,
    "stop": StopRecord.from_body,
    "breaker": BreakerRecord.from_body,
    "verification": VerificationRecord.from_body,
    "goal": GoalRecord.from_body,
    "recovery": RecoveryRecord.from_body,
    "compaction_start": CompactionStartRecord.from_body,
    "compaction": lambda body: (CompactionEndRecord.from_body(body), cleared_of(body)),
    "compaction_discarded": CompactionEndRecord.from_body,
}


def _run(name: str) -> tuple[World, ReferenceAgent]:
    world = World(load_scenario(SCENARIOS / f"{name}.yaml"), seed=1)
    agent = ReferenceAgent(world.ports(1))
    world.clock.run(agent.run(task_for(world.scenario)))
    return world, agent


def _lines(world: World) -> list[dict[str, Any]]:
    """The session log's lines and the compaction log's (the same line format)."""
    files = world.disk.files()
    return [json.loads(line) for path in ("/state/session.jsonl", "/state/compaction.jsonl")
            for line in files.get(path, b"").decode().splitlines()]


@pytest.mark.parametrize("name", ["goals/goal-survives-compactions", "goals/same-gap-twice-pauses",
                                  "budgets/long-outage-breaker",
                                  "compaction/overflow-compacts-and-retries"])
def test_every_viewed_record_a_shipped_run_writes_reads_through_its_view(name: str) -> None:
    world, agent = _run(name)
    seen = set()
    for line in _lines(world):
        view = VIEWS.get(line["kind"])
        if view is not None:
            view(line)  # a key the view names and the writer does not is a KeyError here
            seen.add(line["kind"])
    assert {"session", "turn_end", "stop"} <= seen
    stop = agent.log.stop_record()
    assert stop is not None
    assert SessionHeader.from_body(agent.log.records[0].body).epoch == agent.log.epoch


def test_the_views_cover_every_kind_the_runs_and_the_recovery_writers_produce() -> None:
    seen: set[str] = set()
    for name in ("goals/goal-survives-compactions", "budgets/long-outage-breaker"):
        world, agent = _run(name)
        seen |= {line["kind"] for line in _lines(world) if line["kind"] in VIEWS}
    agent._remind(agent.log.records[-1].turn_id, "repetition", "try another way")
    stop = agent._guard_stop("repetition", "repeating")
    guards = [GuardRecord.from_body(r.body) for r in agent.log.of_kind("guard")]
    assert [(g.counter, g.action, g.reason) for g in guards] == [
        ("repetition", "remind", "try another way"), ("repetition", "stop", stop.reason)]
    seen.add("guard")
    store = SessionLog.open(world.disk.view(), "/state/compaction-probe.jsonl", run_id="r",
                       incarnation=1, clock=VirtualClock(), root="/")
    store.append("compaction_start", "turn_1", compactionId="c1", reason="threshold",
                 throughSeq=3, epoch=1)
    assert close_interrupted(store) == ["c1"]
    ended = store.last("compaction_discarded")
    assert ended is not None
    assert CompactionEndRecord.from_body(ended.body).compaction_id == "c1"
    seen.add(ended.kind)
    assert seen == set(VIEWS)


def test_a_view_names_the_missing_key() -> None:
    with pytest.raises(KeyError, match="infraFailure"):
        StopRecord.from_body({"stopState": "complete", "reason": "done"})
