"""A scripted call the agent's own tool function cannot take: the scenario's cases prove nothing.

A shipped scenario scripts its tool calls for the tools it declares; ``--target
TOOL=MODULE:FUNCTION`` maps one of them onto the user's function, whose signature the
scenario never saw (``crash/secret-arguments-stay-out.yaml`` passes ``mail`` an
``api_key`` a plain ``send_mail(to, body)`` does not take). The script cannot be played
to that agent, so each case of the scenario is ``unknown``, naming the argument and the
signature, and the run goes on; the same way a fault the agent's request cannot take is
left out (``harness.checks``: ``faults``). A scenario's own ``target:`` line that does
not fit is the file's mistake and stops the run at that line
(:func:`~harness.runner.check_functions`). ``harness validate`` names the misfit as an
error, as it does every other reason ``run`` would end a case ``unknown``.
"""

from __future__ import annotations

from harness._errors import ScenarioError
from harness.checks import FaultNotMet, Verdict, faults_not_met
from harness.intercept import PlainEntry, refused_arguments
from harness.runner._results import Case, CaseResult
from harness.scenario import Scenario, check_call_arguments, scenario_error

#: The invariant an unplayable script's verdict is under.
SCRIPT: str = "script"


def mapped_targets(scenario: Scenario, agent: object) -> dict[str, str]:
    """The ``--target`` functions of ``agent`` for tools with no ``target:`` of their own."""
    if not isinstance(agent, PlainEntry):
        return {}
    return {tool: spec for tool, spec in agent.tool_map
            if tool in scenario.tools and not scenario.tools[tool].target}


def unfit_call(scenario: Scenario, agent: object) -> str | None:
    """Why the script cannot be played to ``agent`` (a call its ``--target`` refuses), or None.

    Imports the target functions (the agent's modules): call it where the agent may run.
    """
    mapped = mapped_targets(scenario, agent)
    for turn, reply in enumerate(scenario.model):
        for index, call in enumerate(reply.calls):
            spec = mapped.get(call.tool)
            why = refused_arguments(spec, call.args) if spec is not None else None
            if why is not None:
                assert spec is not None
                return (f"{_line_of(scenario, call.tool, spec)}model[{turn}].calls[{index}] "
                        f"calls {call.tool!r} with arguments --target {call.tool}={spec} does "
                        f"not take: {why}; the scenario cannot be played to this agent, so "
                        "its cases were not run")
    return None


def _line_of(scenario: Scenario, tool: str, spec: str) -> str:
    """``FILE:LINE: `` of the first call of ``tool`` that ``spec`` refuses (where known)."""
    try:
        check_call_arguments(scenario, {tool: spec}, refused_arguments)
    except ScenarioError as error:
        first = error.errors[0]
        return f"{first.path}:{first.line}: "
    return ""


def check_fit(scenario: Scenario, agent: object) -> None:
    """Raise :class:`ScenarioError` at each scripted call a ``--target`` function refuses
    (``harness validate``: what ``run`` reports as ``unknown``)."""
    mapped = mapped_targets(scenario, agent)
    if mapped:
        check_call_arguments(scenario, mapped, refused_arguments)


def check_played(scenario: Scenario, result: CaseResult) -> None:
    """Raise :class:`ScenarioError` for each reason ``result``, the agent's crash-free case
    of ``scenario``, is ``unknown`` for the scenario as written, whatever the agent does
    with what it meets: a scripted fault the stream its requests ask for cannot take (a
    stall ``after_events`` on a whole answer), a scripted tool it offers in no request,
    ``points: all`` with no point of its own. ``harness validate --agent`` lists them as
    ``run`` reports them, in the words of the case's own verdicts, each on the line it is
    about. A fault of a turn the run never reached is left to ``run``: the agent stopping
    early (a bug ``run`` judges) or a turn only a crash case reaches are no file's mistake.
    """
    errors: list[ScenarioError] = []
    if result.unplayable is not None:
        errors.append(scenario_error(scenario, _first_call_unoffered(scenario, result),
                                     result.unplayable))
    if result.trace is not None:
        left_out: dict[int, FaultNotMet] = {}  # each declaration once, as first met
        for fault in faults_not_met(result.trace):
            if fault.left_out is not None:
                left_out.setdefault(_fault_index(scenario, fault), fault)
        errors += [scenario_error(scenario, ("faults", index), fault.reason)
                   for index, fault in sorted(left_out.items())]
    if result.no_crash_case is not None:
        errors.append(scenario_error(scenario, ("crash", "points"), result.no_crash_case))
    if errors:
        raise ScenarioError.combine(errors)


def _fault_index(scenario: Scenario, fault: FaultNotMet) -> int:
    """The scenario's declaration of ``fault``: its turn, attempt and kind (or the first of
    its turn and kind)."""
    found = [index for index, declared in enumerate(scenario.faults)
             if (declared.at.turn, declared.kind) == (fault.turn, fault.kind)]
    exact = [index for index in found if scenario.faults[index].at.attempt == fault.attempt]
    return (exact or found or [0])[0]


def _first_call_unoffered(scenario: Scenario, result: CaseResult) -> tuple[str | int, ...]:
    """Where the script calls a tool the agent offered in no request, or the script."""
    trace = result.trace
    offered = {tool for r in trace.requests for tool in r.offered_tools or ()} \
        if trace is not None else set()
    for turn, reply in enumerate(scenario.model):
        for index, call in enumerate(reply.calls):
            if call.tool not in offered:
                return ("model", turn, "calls", index, "tool")
    return ("model",)


def unfit_result(case: Case, reason: str) -> CaseResult:
    """``unknown``: the case was not run, its script does not fit the agent's tool."""
    verdict = Verdict(SCRIPT, "unknown", reason, advice=_ADVICE)
    return CaseResult(case, None, "not run: a scripted call does not fit the agent's tool",
                      (verdict,), "", crash_reached=False)


_ADVICE = ("leave this scenario out of the run, or copy it and script the call with the "
           "arguments your function takes")
