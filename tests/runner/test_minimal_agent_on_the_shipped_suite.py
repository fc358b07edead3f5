"""A second agent behind the adapter boundary runs the same shipped scenarios (DESIGN §4).

The minimal agent recovers correctly (journal, transcript repair) but maps
every provider failure to ``infra_paused``, runs tool calls whose arguments
did not parse, has no guard against repeating a failing call, keeps raw
tool arguments, secrets included, in its transcript file (J3) and sends every tool
result whole, however long. The suite
must tell the difference: its crash scenarios pass, and exactly the scenarios
that test those finer rules fail, on the invariant that names the rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from minimal_agent import minimal_factory

from harness.runner import dialect_skip, plan_cases, run_case
from harness.scenario import load_scenario, scenario_files

# System tier (pytest --system): every case of shipped scenarios, run more than one way.
pytestmark = pytest.mark.system

SUITE = Path(__file__).resolve().parents[2] / "scenarios"
# scenario -> the invariants the minimal agent must be caught breaking
KNOWN_GAPS = {
    "budget-spent-at-a-crash": {"I4"},
    # It keeps no circuit breaker, budgets no tokens or cost, and never compacts: a
    # restart's longer history (repaired replies, calls issued again) outgrows the window.
    "appended-during-compaction-kept": {"I4", "side_effects"},
    "cost-budget-stops": {"I4", "budget:spend"},
    "long-outage-breaker": {"I4", "breaker"},
    "overflow-compacts-and-retries": {"I4", "side_effects"},
    "token-budget-stops": {"I4", "budget:spend"},
    "tool-timeout-within-deadline": {"I4", "budget:tools"},
    # It caps no tool calls: every page the model asks for is read, and the run completes.
    "tool-call-cap-stops": {"I4", "budget:tool-calls"},
    "invalid-tool-json": {"I7"},
    "overloaded-until-budget": {"I4"},
    "rate-limited-above-cap": {"I4"},
    "rate-limited-in-a-row": {"I4"},
    "repeated-error-stops": {"I4", "L3"},
    "secret-arguments-stay-out": {"J3"},
    "truncated-on-every-attempt": {"I4", "side_effects"},
    "truncated-tool-arguments": {"I4", "side_effects"},
    "cut-answer-with-a-whole-call": {"I4", "side_effects"},
    # It ends the run at an answer cut at its output limit, headroom or not: the mail the
    # model meant to send never is.
    "cut-answer-raises-the-limit": {"I4", "side_effects"},
    "cut-answer-raises-the-limit-anthropic": {"I4", "side_effects"},
    "unauthorized-blocked": {"I4"},
    # It gives up on no client error and caps no run of 429s by its own stop state, and it
    # runs the calls of an answer the provider refused or filtered.
    "client-error-400-openai": {"I4"},
    "client-error-422-anthropic": {"I4"},
    "rate-limited-in-a-row-openai": {"I4"},
    "refused-answer-with-calls-anthropic": {"I4", "refusal", "side_effects"},
    "refused-answer-with-calls-openai": {"I4", "refusal", "side_effects"},
    "refused-answer-across-a-crash": {"I4", "refusal", "side_effects"},
    # It never compacts: the goal's long conversation outgrows the window before the last
    # note is written.
    "goal-survives-compactions": {"side_effects"},
    # It offers no cancel hook: a cancel during its retry wait never reaches it, so after
    # the wait it goes on and writes the note the cancelled turn must not write.
    "cancel-during-retry-wait-openai": {"side_effects"},
    # It reads no training-data mode: it takes an answer cut in its mail call as the
    # model's last word and ends 'complete', and recovers a crash with J5's synthetic
    # replies, placeholders in a session collected as training data.
    "training-cut-call-stops": {"I4"},
    "training-session-never-patched": {"train:no-patch"},
    # It keeps no backup model: with the primary overloaded the whole run it ends
    # infra_paused without one request to the backup, the mail never sent; and a 400 it
    # ends infra_paused, as every provider failure, not failed.
    "backup-model-takes-over": {"I4", "retry:backup", "side_effects"},
    "backup-model-not-for-a-bad-request": {"I4"},
    # It keeps no output by reference: the 60,000-character build log goes whole into the
    # next request, past the scenario's limit of 8,000.
    "long-tool-output-by-reference": {"context:tool-output"},
}


@pytest.mark.parametrize("path", sorted(scenario_files([SUITE])), ids=lambda p: p.stem)
def test_the_minimal_agent_runs_the_shipped_scenario(path: Path) -> None:
    scenario = load_scenario(path)
    factory = minimal_factory()
    skipped = dialect_skip(scenario, factory)
    if scenario.dialect not in ("openai", "anthropic"):
        # The runner leaves out a scenario in a dialect the agent does not speak, and says so.
        assert skipped == (f"this scenario speaks {scenario.dialect}; the agent speaks "
                           "openai, anthropic only")
        return
    assert skipped is None
    cases = plan_cases(scenario, path, factory)
    broken: set[str] = set()
    for case in cases[::7]:  # every seventh case keeps the crash scenarios quick
        result = run_case(case, scenario, factory)
        assert result.error is None, result.error
        broken |= {verdict.invariant for verdict in result.failed_verdicts}
    assert broken == KNOWN_GAPS.get(scenario.name, set())
