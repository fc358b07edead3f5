"""A framework's own persistence points mean one thing: the same case, the same run.

LangGraph saves each checkpoint from a thread pool while the graph's next step goes
on; which commit was the fifth, and what a crash there left behind, changed from run
to run, and so did the verdict. Each of the first of its SQLite points is run three
times, replayed twice and explored once: one digest per case (see
:mod:`harness.intercept._pools`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from harness.intercept import PlainEntry
from harness.runner import _explore, plan_cases, run_case
from harness.scenario import Scenario, load_scenario

pytestmark = pytest.mark.system

SCENARIO = (Path(__file__).resolve().parents[2] / "examples" / "frameworks" / "scenarios"
            / "langgraph_agent" / "crash-after-send.yaml")
POINTS_TRIED = 12


# The example is written as LangGraph's docs show, with create_react_agent, which warns
# that it moved; this suite turns warnings into errors.
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_langgraphs_checkpoint_points_give_one_verdict_each(
        require_framework: Callable[[str], None]) -> None:
    require_framework("langgraph")
    data = load_scenario(SCENARIO).model_dump(mode="json", exclude_none=True)
    data["crash"] = {"points": "all", "classes": ["unsynced_lost"]}
    scenario = Scenario.model_validate(data)
    entry = PlainEntry("examples.frameworks.langgraph_agent:main")
    cases = [c for c in plan_cases(scenario, SCENARIO, entry)
             if c.crash and c.crash.point_id.startswith("sqlite:")][:POINTS_TRIED]
    assert len(cases) == POINTS_TRIED
    runs = []
    for replay in (True, True, False):
        runs.append([run_case(c, scenario, entry, replay=replay) for c in cases])
        _explore._RECORDINGS.clear()
    differ = [c.case_id for c, *results in zip(cases, *runs, strict=True)
              if len({r.digest for r in results}) > 1]
    assert differ == [], f"{len(differ)} of {len(cases)} cases ran differently: {differ}"
