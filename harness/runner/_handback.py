"""What a case's worker hands back: its trace as JSON, judged in the harness's own process.

The agent under test runs in a worker process where it can change anything: a
checker replaced by one that always passes, a ``Counter`` that never counts two,
a digest of its liking. So the worker only *runs* the case and sends back what
the world saw, the trace, as JSON (:func:`handback`); the harness's process, where
no agent code ever ran, rebuilds the trace from that data, computes its digest and
gives the verdicts (:func:`judge_handback`). A pickle never crosses: unpickling
runs whatever code the bytes name, and the agent may have written them.

The message is one JSON list, a header and the case's traces::

    [{"kind": "trace", "how": "recorded"}, {...trace...}]
    [{"kind": "twice"}, {...first run...}, {...second run...}]      # --check-determinism
    [{"kind": "limit", "limit": "disk_bytes", "detail": "..."}]     # stopped at a harness limit
    [{"kind": "failure", "reason": "the agent called sys.exit(3); ..."}]
    [{"kind": "harness_error", "problems": ["..."]}]                # the harness's, not the case's

From a sealed worker, a header with traces also says where each one's side effects came
from (``"ledgers"``: :func:`harness.runner._ledger_pipe.parts_of`), and the harness reads
that against the ledger it kept from the effects told to it as they happened.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from fakes import HarnessLimitExceeded
from harness._errors import HarnessError, ScenarioError, WorkerError
from harness.runner._ledger_pipe import HarnessLedger, installed, parts_of, tamper_result
from harness.runner._results import Case, CaseResult, without_secrets
from harness.trace import Trace, TraceDataError, trace_from_json

if TYPE_CHECKING:
    from harness.runner._agent_choice import AgentChoice
    from harness.runner._run import AgentUnderTest
    from harness.scenario import Scenario

#: The largest message a worker may send back: a trace past it is a runaway agent's.
MAX_HANDBACK_BYTES = 512 * 1024 * 1024


def contained_failure(case: Case, reason: str) -> CaseResult:
    """The result of a case the harness had to stop: no verdicts, the reason as its error."""
    return CaseResult(case, None, reason, (), "", crash_reached=False, error=reason)


# -- the worker's side --------------------------------------------------------------------


def handback(case: Case, scenario: Scenario, agent: AgentChoice) -> bytes:
    """Run ``case`` here (in a worker) and say what happened, as the JSON message above."""
    header, traces = _ran(case, scenario, agent)
    if traces and installed() is not None:
        # Where each trace's effects came from, read against the harness's own ledger.
        header = {**header, "ledgers": [parts_of(trace) for trace in traces]}
    return sendable(header, traces)


def sendable(header: dict[str, Any], traces: tuple[Trace, ...]) -> bytes:
    """The message of ``header`` and ``traces``; a failure if a trace cannot be JSON."""
    try:
        return _encode(header, traces)
    except (ValueError, TypeError, RecursionError) as error:
        # A trace JSON cannot hold (a NaN, an object): say so instead of dying silently.
        reason = f"the case's trace could not be sent back from its worker: {error}"
        return _encode({"kind": "failure", "reason": reason}, ())


def _ran(case: Case, scenario: Scenario, agent: AgentChoice
         ) -> tuple[dict[str, Any], tuple[Trace, ...]]:
    from harness.runner._case import run_trace, traced
    from harness.runner._unfit_calls import unfit_call

    try:
        factory = agent.load(scenario)
        unfit = unfit_call(scenario, factory)
        if unfit is not None:  # not run: its script does not fit the agent's tool
            return {"kind": "unfit", "reason": unfit}, ()
        if agent.twice:  # both runs replay the case from its start (see run_case_twice)
            return {"kind": "twice"}, (run_trace(case, scenario, factory, replay=True),
                                       run_trace(case, scenario, factory, replay=True))
        trace, how = traced(case, scenario, _or_reference(factory), agent.replay or None)
        return {"kind": "trace", "how": how}, (trace,)
    except HarnessLimitExceeded as limit:
        detail = str(limit).removeprefix("harness_limit: ")
        return {"kind": "limit", "limit": limit.limit, "detail": detail}, ()
    except HarnessError as error:
        problems = error.errors if isinstance(error, ScenarioError) else [error]
        return {"kind": "harness_error", "problems": [str(p) for p in problems]}, ()
    except SystemExit as error:
        reason = f"the agent called sys.exit({error.code!r}); the case was stopped there"
        return {"kind": "failure", "reason": reason}, ()
    except Exception as error:  # outside the runner's own guard: still this case's failure
        return {"kind": "failure", "reason": f"{type(error).__name__}: {error}"}, ()
    except BaseException as error:  # past every guard (KeyboardInterrupt, its own kind)
        reason = f"the agent raised {type(error).__name__}: {error}; the case was stopped there"
        return {"kind": "failure", "reason": reason}, ()


def _or_reference(factory: AgentUnderTest | None) -> AgentUnderTest:
    from harness.runner._run import default_agent_factory

    return factory or default_agent_factory


def _encode(header: dict[str, Any], traces: tuple[Trace, ...]) -> bytes:
    # Each trace goes as its canonical JSON, the very text its digest is taken over.
    parts = [json.dumps(header, allow_nan=False), *(t.canonical_json() for t in traces)]
    return ("[" + ",".join(parts) + "]").encode("utf-8", "surrogatepass")


# -- the harness's side -------------------------------------------------------------------


def judge_handback(case: Case, scenario: Scenario, message: bytes,
                   ledger: HarnessLedger | None = None) -> CaseResult:
    """The result of ``case`` from its worker's ``message``, judged here.

    Raises :class:`~harness._errors.WorkerError` for the harness's own errors; any
    message that is not one of the shapes above fails the case, saying so. ``ledger``:
    the effects the worker told as they happened (:mod:`harness.runner._ledger_pipe`);
    traces whose effects differ from it fail the case with a ``judge`` verdict.
    """
    try:
        header, traces = _decoded(message)
        problems = _strings(header.get("problems")) if header["kind"] == "harness_error" \
            else None
    except (ValueError, TypeError, RecursionError) as error:
        return contained_failure(case, "the case's worker sent back a result the harness "
                                 f"cannot read ({error}); the agent may have written to "
                                 "the harness's channel")
    if problems is not None:
        raise WorkerError(tuple(problems))
    difference = None if ledger is None or not traces else \
        ledger.difference(header.get("ledgers"), traces)
    if difference is not None:
        return without_secrets(tamper_result(case, difference), scenario.secret_values())
    try:
        result = _judged(case, scenario, header, traces)
    except Exception as error:  # a checker that fails on this trace fails this case only
        result = contained_failure(case, f"{type(error).__name__}: {error}")
    return without_secrets(result, scenario.secret_values())


def _judged(case: Case, scenario: Scenario, header: dict[str, Any],
            traces: tuple[Trace, ...]) -> CaseResult:
    from harness.runner._case import judged
    from harness.runner._determinism import judged_twice
    from harness.runner._run import limit_result
    from harness.runner._unfit_calls import unfit_result

    kind = header["kind"]
    if kind == "trace" and len(traces) == 1:
        return judged(case, scenario, traces[0], _text(header.get("how")))
    if kind == "twice" and len(traces) == 2:
        return judged_twice(case, scenario, *traces)
    if kind == "unfit":
        return unfit_result(case, _text(header.get("reason")))
    if kind == "limit":
        limit = HarnessLimitExceeded(_text(header.get("limit")), _text(header.get("detail")))
        return limit_result(case, limit)
    if kind == "failure":
        return contained_failure(case, _text(header.get("reason")))
    raise TraceDataError(f"a {kind!r} message with {len(traces)} trace(s)")


def _decoded(message: bytes) -> tuple[dict[str, Any], tuple[Trace, ...]]:
    data = json.loads(message, parse_constant=_not_json)
    if not isinstance(data, list) or not data or not isinstance(data[0], dict) \
            or not isinstance(data[0].get("kind"), str):
        raise TraceDataError("not a list that starts with a header naming its kind")
    return data[0], tuple(trace_from_json(item) for item in data[1:])


def _not_json(constant: str) -> Any:
    raise TraceDataError(f"{constant} is not JSON")


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TraceDataError(f"{value!r} where a text belongs")
    return value


def _strings(value: object) -> list[str]:
    if not isinstance(value, list):
        raise TraceDataError(f"{value!r} where a list of texts belongs")
    return [_text(item) for item in value]
