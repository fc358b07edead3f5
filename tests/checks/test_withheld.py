"""refusal: a withheld answer's tool calls never run, in every dialect (seed 002 §19.1 ②)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from fakes import ScriptedResponse, ScriptedUsage, Text
from fakes._script import ToolUse
from fakes._wire import RenderContext
from fakes._wire_anthropic import render as anthropic
from fakes._wire_gemini import render as gemini
from fakes._wire_openai import render as openai
from fakes._wire_responses import render as responses
from harness.runner import Case, CaseResult, run_case
from harness.scenario import load_scenario

DIALECTS = ["openai", "anthropic", "openai-responses", "gemini"]


def shipped(dialect: str) -> CaseResult:
    path = Path(f"scenarios/dialects/refused-answer-with-calls-{dialect}.yaml")
    scenario = load_scenario(path)
    return run_case(Case(scenario.name, path, scenario.seed), scenario)


@pytest.mark.parametrize(("render", "finish", "word"), [
    (openai, "content_filter", '"finish_reason":"content_filter"'),
    (openai, "refusal", '"finish_reason":"content_filter"'),
    (anthropic, "content_filter", '"stop_reason":"refusal"'),
    (anthropic, "refusal", '"stop_reason":"refusal"'),
    (gemini, "refusal", '"finishReason":"SAFETY"'),
    (responses, "content_filter", '"incomplete_details":{"reason":"content_filter"}'),
])
def test_each_dialect_words_a_withheld_answer_as_its_api(render: object, finish: str,
                                                         word: str) -> None:
    response = ScriptedResponse((Text("No."), ToolUse("call_1", "mail", {"to": "a"})),
                                finish, ScriptedUsage(5, 2))  # type: ignore[arg-type]
    frames = render(response, RenderContext("resp_1", 0, random.Random(0)))  # type: ignore[operator]
    assert word in "".join(frame.data or "" for frame in frames)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_reference_agent_runs_no_call_of_a_withheld_answer(dialect: str) -> None:
    result = shipped(dialect)
    verdicts = {v.invariant: v.status for v in result.verdicts}
    assert verdicts["refusal"] == "pass"
    assert result.passed, result.failed_verdicts
    assert result.trace is not None
    assert not result.trace.invocations
    assert result.stop_state == "failed"


def test_a_run_with_no_withheld_answer_gets_no_refusal_verdict() -> None:
    path = Path("scenarios/tools/results-in-the-models-order.yaml")
    scenario = load_scenario(path)
    result = run_case(Case(scenario.name, path, scenario.seed), scenario)
    assert "refusal" not in {v.invariant for v in result.verdicts}
