"""L3: the same failing call, sent again and again, must end in a stop (seed 002 §19.6)."""

from __future__ import annotations

from pathlib import Path

import pytest
from minimal_agent import minimal_factory

from harness.checks import check_l3
from harness.runner import plan_cases, run_trace
from harness.scenario import load_scenario

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios/tools/repeated-error-stops.yaml"


def _verdict(factory: object = None) -> tuple[str, str]:
    scenario = load_scenario(SCENARIO)
    (case,) = plan_cases(scenario, SCENARIO)
    verdict = check_l3(run_trace(case, scenario, factory))  # type: ignore[arg-type]
    return verdict.status, verdict.message


def test_the_reference_loop_stops_the_repetition() -> None:
    status, message = _verdict()
    assert status == "pass"
    assert message.startswith('deploy {"body":"release 9","to":"prod"} (error) failed 2 turns')


def test_an_agent_without_a_guard_is_caught_repeating() -> None:
    status, message = _verdict(minimal_factory())
    assert status == "fail"
    assert message == ('deploy {"body":"release 9","to":"prod"} (error) failed 5 turns in a row; '
                       "expected a stop or a change of course after at most 3")


def test_no_repeated_failure_is_unknown_not_pass() -> None:
    path = SCENARIO.parent / "parallel-reads-and-a-writer.yaml"
    scenario = load_scenario(path)
    (case,) = plan_cases(scenario, path)
    assert check_l3(run_trace(case, scenario)).status == "unknown"


_TWO_FAILING_CALLS_EACH_TURN = """
from types import SimpleNamespace
from harness.checks import check_l3
from harness.trace import MessageRecord
messages = []
for turn in range(5):
    calls = tuple((f"c{turn}{tool}", tool, "{}") for tool in ("alpha", "beta", "gamma"))
    messages.append(MessageRecord("assistant", f"t{turn}", tool_calls=calls))
    messages += [MessageRecord("tool", f"t{turn}", call_id=c[0], status="error") for c in calls]
outcome = SimpleNamespace(transcript=tuple(messages), reason="cap", stop_state="failed")
print(check_l3(SimpleNamespace(outcome=outcome)).message)
"""


@pytest.mark.system  # system tier: six child interpreters
def test_the_streak_named_does_not_depend_on_the_hash_seed() -> None:
    # Three fingerprints tie; the one named came from set iteration order, which
    # string hashing makes differ between processes (xdist workers, reruns).
    import os
    import subprocess
    import sys

    messages = {
        subprocess.run([sys.executable, "-c", _TWO_FAILING_CALLS_EACH_TURN], check=True,
                       capture_output=True, text=True,
                       env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout
        for seed in range(6)
    }
    assert messages == {"alpha {} (error) failed 5 turns in a row; expected a stop or a change "
                        "of course after at most 3\n"}
