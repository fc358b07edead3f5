"""A case's trace leaves its worker as JSON and is judged where the agent never ran."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from harness._errors import WorkerError
from harness.runner import Case, CrashSpec, run_case, run_trace
from harness.runner._handback import judge_handback, sendable
from harness.scenario import Scenario, load_scenario
from harness.trace import Trace
from harness.trace._decode import TraceDataError, trace_from_json

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "scenarios/crash/unknown-after-send.yaml"


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return load_scenario(SOURCE)


@pytest.fixture(scope="module")
def crashed(scenario: Scenario) -> tuple[Case, Trace]:
    """A case crashed after a write of its journal: requests, effects, recoveries and all."""
    crash = CrashSpec("journal:fsync#3", "after", "process_killed")
    case = Case(scenario.name, SOURCE, scenario.seed, crash)
    return case, run_trace(case, scenario)


def as_json(trace: Trace) -> Any:
    return json.loads(trace.canonical_json())


def test_a_trace_rebuilt_from_its_json_is_the_same_trace_with_the_same_digest(
        crashed: tuple[Case, Trace]) -> None:
    _, trace = crashed
    assert all((trace.effects, trace.requests, trace.recoveries))  # a trace with everything

    rebuilt = trace_from_json(as_json(trace))

    assert rebuilt == trace
    assert rebuilt.digest == trace.digest
    assert isinstance(rebuilt.requests[0].faults, tuple)  # the records' tuples, not lists


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["requests"][0].update(status="200"),
     r"^trace\.requests\[0\]\.status: '200' is not a int$"),
    (lambda d: d["effects"][0].update(digest="0" * 64),
     r"^trace\.effects\[0\]: EffectRecord has no field 'digest'$"),
    (lambda d: d["crash"].pop("fired"), r"^trace\.crash: CrashRecord lacks its field 'fired'$"),
    (lambda d: d["incarnations"][0].update(purpose="forged"),
     r"^trace\.incarnations\[0\]\.purpose: 'forged' is not one of \('run', 'recover-check'\)$"),
    (lambda d: d.update(digest="0" * 64), r"^trace: Trace has no field 'digest'$"),
    # The typed fields: a stop state, a tool kind, an outcome, a finish, a reply status, the
    # extra record's keys.
    (lambda d: d["outcome"].update(stop_state="done"),
     r"^trace\.outcome\.stop_state: 'done' is not one of \('complete', "),
    (lambda d: d["invocations"][0].update(kind="mail"),
     r"^trace\.invocations\[0\]\.kind: 'mail' is not one of \('append', "),
    (lambda d: d["invocations"][0].update(outcome="fine"),
     r"^trace\.invocations\[0\]\.outcome: 'fine' is not one of \('ok', "),
    (lambda d: d["requests"][0].update(finish="end"),
     r"^trace\.requests\[0\]\.finish: 'end' is not one of \('stop', "),
    (lambda d: next(m for m in d["outcome"]["transcript"] if m["role"] == "tool").update(
        status="fine"),
     r"^trace\.outcome\.transcript\[\d+\]\.status: 'fine' is not one of \('ok', "),
    (lambda d: d["extra"].update(agent_said="hello"),
     r"^trace\.extra: TraceExtra has no field 'agent_said'$"),
    (lambda d: d["extra"].update(world_events="tool:send_mail#1"),
     r"^trace\.extra\.world_events: 'tool:send_mail#1' is not a list$"),
])
def test_data_that_is_not_a_trace_is_refused_where_it_is_wrong(
        crashed: tuple[Case, Trace], change: Any, message: str) -> None:
    data = as_json(crashed[1])
    change(data)
    with pytest.raises(TraceDataError, match=message):
        trace_from_json(data)


def test_the_harness_judges_the_trace_as_run_case_does(
        scenario: Scenario, crashed: tuple[Case, Trace]) -> None:
    case, trace = crashed
    result = judge_handback(case, scenario, sendable({"kind": "trace", "how": "replayed"},
                                                     (trace,)))
    assert result == run_case(case, scenario, replay=True)
    assert result.digest == trace.digest
    assert result.trace == trace


def test_a_message_the_worker_could_have_shaped_never_runs_code_here(
        scenario: Scenario, crashed: tuple[Case, Trace], tmp_path: Path) -> None:
    case, _ = crashed
    planted = tmp_path / "planted"

    class Payload:
        def __reduce__(self) -> tuple[Any, ...]:
            return (Path.touch, (planted,))

    result = judge_handback(case, scenario, pickle.dumps(("result", Payload())))

    assert not planted.exists()
    assert result.status == "fail"
    assert result.error is not None
    assert result.error.startswith("the case's worker sent back a result the harness cannot "
                                   "read (")


@pytest.mark.parametrize("message", [
    b'[{"kind": "trace", "how": "replayed"}, {"case": NaN}]',
    b'{"kind": "trace"}',
    b'[{"kind": "twice"}]',
    b'[{"kind": "failure", "reason": 7}]',
    b'[{"kind": "harness_error", "problems": "one"}]',
    b"[" * 100_000,
])
def test_a_message_of_no_known_shape_fails_its_case(
        scenario: Scenario, crashed: tuple[Case, Trace], message: bytes) -> None:
    result = judge_handback(crashed[0], scenario, message)
    assert result.status == "fail"
    assert result.verdicts == ()
    assert result.error is not None


def test_a_limit_and_a_harness_error_keep_their_meaning(
        scenario: Scenario, crashed: tuple[Case, Trace]) -> None:
    case, _ = crashed
    limit = sendable({"kind": "limit", "limit": "requests", "detail": "too many"}, ())
    verdict, = judge_handback(case, scenario, limit).verdicts
    assert (verdict.invariant, verdict.status, verdict.message) == (
        "harness_limit", "fail", "too many")

    with pytest.raises(WorkerError, match=r"^scenario broken$"):
        judge_handback(case, scenario, sendable(
            {"kind": "harness_error", "problems": ["scenario broken"]}, ()))
