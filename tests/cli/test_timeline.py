"""A failure shows its timeline: per attempt, virtual time, status, bytes, fault, agent retry."""

from __future__ import annotations

from pathlib import Path

from harness import runner
from harness._report_text import render_failure
from harness.scenario import load_scenario

SCENARIO = """\
name: stall-timeline
dialect: openai
model:
  - turn: 1
    text: "Hi."
faults:
  - {at: {turn: 1, attempt: 1}, kind: stall, after_events: 2, seconds: 120}
  - {at: {turn: 1, attempt: 2}, kind: http_error, status: 429, retry_after: 3}
expect:
  stop_state: blocked
"""


def test_a_failure_shows_which_fault_hit_which_attempt(tmp_path: Path) -> None:
    path = tmp_path / "stall.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    scenario = load_scenario(path)
    case = next(iter(runner.plan_cases(scenario, path)))
    text = render_failure(runner.run_case(case, scenario=scenario), scenario)
    start = text.index("timeline (virtual seconds; one line per request attempt)")
    assert text[start:].splitlines()[1:4] == [
        "      0.000s  run 1  turn 1 attempt 1  status 200  543/1229 bytes  partial  "
        "fault: stall",
        "     31.623s  run 1  turn 1 attempt 2  status 429  140/140 bytes  http_error  "
        "fault: http_error  agent: a transport retry",
        "     34.623s  run 1  turn 1 attempt 3  status 200  1229/1229 bytes  complete  "
        "fault: none  agent: a request retry",
    ]
