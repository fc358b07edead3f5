"""An answer whose terminal event arrived is whole, whatever the connection does next.

A server that sends ``message_stop`` (or ``[DONE]``) and then resets or holds the
connection open has delivered a complete answer: an agent that acts on it is
right (S2), and I7 must not call its tool calls "from an incomplete answer".
An agent that instead waits for the end of the connection meets its idle
watchdog and retries, which is slower but also safe; its stall after the last
byte must be judged by the watchdog rule, not by I7.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.ports import DIALECTS
from harness.runner import Case, run_case
from harness.scenario import load_scenario

SCENARIO = """\
name: reset-after-the-last-event
dialect: {dialect}
seed: 8
tools: {{notes: {{kind: append}}}}
model:
  - {{turn: 1, calls: [{{tool: notes, args: {{text: first try}}}}]}}
  - {{turn: 2, text: Noted.}}
faults:
  - {{kind: {kind}, at: {{turn: 1}}, after_events: {events}}}
expect: {{stop_state: complete}}
"""

# The number of events of turn 1's answer in each dialect, so the fault strikes
# right after the terminal event.
EVENTS = {"anthropic": 14, "openai": 12, "openai-responses": 13, "gemini": 2}
HALF = {"anthropic": 7, "openai": 6, "openai-responses": 6, "gemini": 1}


def _run(tmp_path: Path, dialect: str, kind: str, events: int) -> dict[str, str]:
    source = tmp_path / "s.yaml"
    source.write_text(SCENARIO.format(dialect=dialect, kind=kind, events=events))
    scenario = load_scenario(source)
    result = run_case(Case(scenario.name, source, scenario.seed, None), scenario)
    assert result.trace is not None
    first = result.trace.requests[0]
    return {"delivery": first.delivery, **{v.invariant: v.status for v in result.verdicts}}


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("kind", ["connection_reset", "stall"])
def test_a_cut_after_the_terminal_event_leaves_the_answer_whole(
        tmp_path: Path, dialect: str, kind: str) -> None:
    seen = _run(tmp_path, dialect, kind, EVENTS[dialect])
    assert seen["delivery"] == "complete"
    assert seen["I7"] != "fail"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_cut_before_the_terminal_event_is_still_partial(tmp_path: Path, dialect: str) -> None:
    seen = _run(tmp_path, dialect, "connection_reset", HALF[dialect])
    assert seen["delivery"] == "partial"


ERROR_BODY_STALLS = """\
name: error-body-stalls
dialect: openai
seed: 12
tools: {notes: {kind: append}}
model:
  - {turn: 1, calls: [{tool: notes, args: {text: never written}}]}
faults:
  - {kind: http_error, at: {turn: 1}, status: 400}
  - {kind: stall, at: {turn: 1}, after_events: 1}
expect: {stop_state: failed}
"""


def test_the_idle_watchdog_covers_an_error_body(tmp_path: Path) -> None:
    # An error answer whose body stalls is one more silent read (S1): the
    # watchdog abandons it after idle_timeout, not after the first-byte limit.
    source = tmp_path / "s.yaml"
    source.write_text(ERROR_BODY_STALLS)
    scenario = load_scenario(source)
    result = run_case(Case(scenario.name, source, scenario.seed, None), scenario)
    s1 = next(v for v in result.verdicts if v.invariant == "S1")
    assert s1.status == "pass", (s1.message, s1.evidence)
