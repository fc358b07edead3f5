"""The top-level ``harness`` package is the user's namespace, loaded on first use.

``import harness`` must stay cheap (a fresh interpreter shows what it loads), and each
class or function it hands out says it belongs to ``harness``, as httpx's do, so a user
reads ``harness.Trace`` in a repr or a traceback rather than a private module's name.
"""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

import harness
from harness.runner import run_trace
from harness.trace._decode import trace_from_json

SOURCE = Path(__file__).resolve().parent.parent / "scenarios/crash/unknown-after-send.yaml"

FACE = [name for name in harness.__all__ if not name.startswith("__")]


def test_importing_harness_loads_no_other_module_of_the_project() -> None:
    code = ("import sys; import harness; print(' '.join(sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('harness', 'fakes', 'reports'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["harness", "harness._errors", "harness._lazy"]


def test_the_face_holds_the_contract_the_run_the_results_and_the_errors() -> None:
    expected = {"Agent", "AgentPorts", "AgentOutcome", "Task", "StopState", "Usage",
                "load_scenario", "plan_cases", "run_case", "CaseResult", "Verdict", "Trace",
                "VirtualClock", "HarnessError", "ConfigError", "ScenarioError"}
    assert expected <= set(FACE)
    assert 35 <= len(FACE) <= 45


@pytest.mark.parametrize("name", FACE)
def test_each_class_and_function_says_it_belongs_to_harness(name: str) -> None:
    value = getattr(harness, name)
    if isinstance(value, type | types.FunctionType):
        assert value.__module__ == "harness"


def test_an_unknown_name_is_a_clear_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'harness' has no attribute 'Trase'"):
        _ = harness.Trase  # type: ignore[attr-defined]


def test_a_trace_still_decodes_after_its_records_say_they_belong_to_harness() -> None:
    # The decoder once read field types from the namespace of a record's __module__,
    # which for a record the face handed out is this package's, without the field types.
    for name in FACE:
        getattr(harness, name)
    scenario = harness.load_scenario(SOURCE)
    case = harness.Case(scenario.name, SOURCE, scenario.seed)
    trace = run_trace(case, scenario)
    assert harness.RequestRecord.__module__ == "harness"

    rebuilt = trace_from_json(json.loads(trace.canonical_json()))

    assert rebuilt == trace
