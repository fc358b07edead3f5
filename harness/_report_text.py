"""Render a failed case for people: the YAML that matters, the crash, the evidence, the replay.

The pytest plugin and ``harness run`` print the same text, so a CI log and a
terminal look alike. A report reads top to bottom as: which case, where it
crashed, the scenario lines involved (numbered, ``>`` on the ones the failure
points at), every broken invariant with its evidence, and one command that
re-runs exactly this case::

    print(render_failure(result, scenario))
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from harness._inputs import read_input
from harness._redact import redact_text
from harness.ports import CUTTING_FAULTS, cut_at_limit
from harness.runner import FAIL_UNREACHED, CaseResult, Verdict, is_world_point
from harness.scenario import MAX_BYTES, Scenario, source_of
from harness.trace import RequestRecord, Trace, request_turn

# Lines shown around each line a failure points at.
_CONTEXT = 1
# The top of a file says what the scenario is; never show fewer lines of it.
_HEADER_LINES = 3
# A failure's evidence can be a whole transcript; the report shows its start.
_MAX_EVIDENCE = 12
# The agent's own output: the report shows its last lines, each cut to a screen's width.
_OUTPUT_LINES = 20
_OUTPUT_WIDTH = 200

# Where in the scenario each invariant's promise is written, beyond the tools it names.
_INVARIANT_LOCS: dict[str, tuple[tuple[str | int, ...], ...]] = {
    "I1": (("expect", "side_effects"),),
    "I4": (("expect", "stop_state"),),
    "I5": (("goal",),),
    "I5:proof": (("verifier",),),
    "I5:context": (("goal",), ("provider", "context_window")),
    "I5:lease": (("goal", "lease_seconds"),),
    "I5:protected": (("goal", "protected"),),
    "I5:status": (("expect", "stop_state"), ("goal",)),
    "cache:restart": (("provider", "prompt_cache"),),
    "L3:same-gap": (("verifier",),),
    "CANCEL:goal": (("cancels",),),
    "budget:rounds": (("goal", "budget"),),
    "I7": (("faults",),),
    "I8": (("faults",),),
    "I9": (("budget",),),
    "budget:tool-calls": (("budget", "max_tool_calls"),),
    "budget:job-runtime": (("budget", "max_job_seconds"),),
    "budget:job-starts": (("budget", "max_jobs"),),
    "budget:job-output": (("budget", "max_job_output_lines"),),
    "context:tool-output": (("expect", "max_tool_result_chars"),),
    "L3:hook": (("hook",),),
    "retry:doom-loop": (("faults",),),
    "retry:backup": (("provider", "backup_model"), ("provider", "outages")),
    "S6:limit": (("provider", "max_output_tokens"),),
    "train:no-patch": (("training_data",),),
    "I10": (("expect", "side_effects"),),
}


def render_failure(result: CaseResult, scenario: Scenario | None = None, *,
                   node_id: str | None = None) -> str:
    """The whole report of a case that did not pass, as text without trailing newline.

    Under pytest, ``node_id`` adds the command that re-runs just this item.
    """
    headline = f"{_verdict_line(result)}\n{_headline(result, scenario)}"
    replay = f"replay: {result.case.replay_command}"
    if node_id is not None:
        replay += f"\n    or: pytest {shlex.quote(node_id)}"
    parts = [headline, _yaml_section(result, scenario), _problems_section(result, scenario),
             timeline(result), _output_section(result), replay]
    # The scenario's lines and the evidence may quote credentials; a CI log must not.
    secrets = scenario.secret_values() if scenario is not None else ()
    return redact_text("\n\n".join(part for part in parts if part), values=secrets)


def fold_failures(results: Iterable[CaseResult]) -> list[list[CaseResult]]:
    """Failed cases grouped by what failed, in the order each group first appears.

    Cases share a group only when everything the shown case's report says of them
    holds for each: the same scenario (whose file, lines and replay command the report
    shows), the same harness error, stop state and stop reason, whether the
    crash and the faults were reached, the same failed checks and warnings with the
    same messages, and the same diagnoses. A crash scenario that breaks one rule at
    forty points says so forty times in the same words; the report shows the first case
    in full and names the others.
    """
    groups: dict[tuple[object, ...], list[CaseResult]] = {}
    for result in results:
        groups.setdefault(_failure_signature(result), []).append(result)
    return list(groups.values())


def _failure_signature(result: CaseResult) -> tuple[object, ...]:
    shown = tuple((v.invariant, v.status, v.message) for v in result.verdicts
                  if v.status in ("fail", "warn"))
    trace = result.trace
    explained = () if trace is None or result.status != "fail" else tuple(
        rule.__name__ for rule in _RULES if rule(result, trace))
    # Of one scenario only: each scenario's failure needs its own report and replay command.
    return (result.case.scenario_name, result.status, result.error, result.stop_state,
            result.stop_reason, result.crash_reached, result.unreached_faults, shown, explained)


#: How many of the cases that failed alike the note names; the rest are counted.
FOLDED_NAMED = 10


def folded_note(others: list[CaseResult]) -> str:
    """The line that stands for the cases that failed like the one shown in full: their ids,
    the first :data:`FOLDED_NAMED` of them (a scenario crashed at every point can fail alike
    in hundreds of cases, each id on one line of thousands of characters), then a count.
    """
    ids = ", ".join(result.case.case_id for result in others[:FOLDED_NAMED])
    rest = len(others) - FOLDED_NAMED
    more = f" and {rest} more (every case is in the results' cases.jsonl)" if rest > 0 else ""
    return f"the same failure in {len(others)} more case(s): {ids}{more}"


def timeline(result: CaseResult) -> str:
    """One line per request attempt, in virtual time: what came back, what broke it, and how
    the agent took it; empty when the result carries no trace.

    ``0.000s  run 1  turn 1 attempt 1  status 200  142/310 bytes  truncated  fault: stall``
    """
    requests = result.trace.requests if result.trace is not None else ()
    if not requests:
        return ""
    lines = ["timeline (virtual seconds; one line per request attempt)"]
    assert result.trace is not None
    lines += [_attempt_line(result.trace, request) for request in requests]
    return "\n".join(lines)


def _attempt_line(trace: Trace, request: RequestRecord) -> str:
    faults = ", ".join(request.faults) or "none"
    # A request refused before the model keeps turn 0 in its record: named by its real turn.
    place = request_turn(trace, request)
    parts = [f"{request.started_at:9.3f}s", f"run {request.incarnation}",
             place, f"status {request.status}",
             f"{request.delivered_bytes}/{request.planned_bytes} bytes",
             request.delivery + (" (truncated)" if request.truncated else ""),
             f"fault: {faults}"]
    if request.retry_layer is not None:
        parts.append(f"agent: a {request.retry_layer} retry")
    return "  " + "  ".join(parts)


def _verdict_line(result: CaseResult) -> str:
    """One line that says why, first: pytest's short summary shows only this line."""
    failed = result.failed_verdicts
    if failed:
        # A verdict that holds of any run (another dialect, a real host, a dropped tool)
        # is the cause the rest follow from: "I4 broken" first hid "dialect" in "2 more".
        first = next((v for v in failed if v.invariant in FAIL_UNREACHED), failed[0])
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        return f"{first.invariant} broken: {first.message}{more}"
    if result.error is not None:
        return f"harness error: {result.error}"
    return result.unknown_reason


def _headline(result: CaseResult, scenario: Scenario | None) -> str:
    case = result.case
    lines = [f"scenario  {case.scenario_name}  ({case.source}, seed {case.seed})"]
    if case.crash is not None:
        crash = case.crash
        again = ", again during recovery" if crash.during_recovery else \
            _then_text(result, scenario)
        reached = "reached" if result.crash_reached else "NEVER REACHED"
        lines.append(f"crash     {crash.point_id} {crash.when}, {crash.crash_class}{again}"
                     f" ({reached})")
    else:
        lines.append("crash     none")
    lines.append(f"stopped   {result.stop_state or '-'}: {result.stop_reason}")
    tools = sorted({*result.side_effects, *(scenario.tools if scenario else ())})
    if tools:
        effects = ", ".join(f"{tool}={result.side_effects.get(tool, 0)}" for tool in tools)
        lines.append(f"ledger    {effects} side effect(s); {result.duplicates} duplicate(s)")
    return "\n".join(lines)


def _then_text(result: CaseResult, scenario: Scenario | None) -> str:
    """The scenario's second crash (``crash.then``) and whether a later incarnation met it."""
    then = scenario.crash.then if scenario is not None else None
    if then is None:
        return ""
    second = result.trace.crash.second if result.trace is not None else None
    return f", then at {then} ({'reached' if second else 'not reached'})"


def _problems_section(result: CaseResult, scenario: Scenario | None = None) -> str:
    lines: list[str] = []
    if result.error is not None:
        lines += ["harness error", f"  {result.error}"]
    if result.case.crash is not None and not result.crash_reached:
        lines += ["the crash point was never reached, so this case proves nothing"]
    traceback = result.trace.extra.agent_traceback if result.trace else None
    if traceback:
        lines += ["the agent's own exception (its code, not the harness)",
                  *(f"  {line}" for line in traceback.splitlines())]
    foreign = result.trace.extra.foreign_requests if result.trace else None
    if foreign:
        lines += ["outside calls no fake provider serves (refused: no network in a case)",
                  *(f"  {line}" for line in foreign[:_MAX_EVIDENCE])]
    refused = result.trace.extra.databases_refused if result.trace else None
    if refused:
        lines += ["SQLite databases the world could not open (their folder is not in the case's "
                  "world: open them under the working folder, or create the folder first)",
                  *(f"  {path}" for path in refused[:_MAX_EVIDENCE])]
    telemetry = result.trace.extra.telemetry_requests if result.trace else None
    if telemetry:
        lines += ["telemetry answered by the harness (information, no verdict)",
                  *(f"  {line}" for line in telemetry[:_MAX_EVIDENCE])]
    lines += [f"the fault {fault} was never reached, so this case proves nothing about it"
              for fault in result.unreached_faults]
    failed = result.failed_verdicts
    if failed:
        lines.append("broken invariants")
        for verdict in failed:
            lines += _verdict_lines(verdict)
    explained = diagnosis(result) + _untargeted_tools(result, scenario)
    if explained:
        lines.append("what this most likely means")
        lines += [f"  - {line}" for line in explained]
    if result.warnings:
        lines.append("warnings (failures under --strict)")
        for verdict in result.warnings:
            lines += _verdict_lines(verdict)
    return "\n".join(lines)


def _output_section(result: CaseResult) -> str:
    """The last lines the agent wrote to stdout and stderr while the case ran."""
    output = result.output
    if output is None:
        return ""
    lines = output.tail.splitlines()
    shown = lines[-_OUTPUT_LINES:]
    left = len(lines) - len(shown)
    if output.cut or left:
        title = (f"the agent's output (stdout and stderr): its last {len(shown)} line(s) of "
                 f"{output.written:,} bytes")
    else:
        title = "the agent's output (stdout and stderr)"
    return "\n".join([title, *(f"  {_cut(line)}" for line in shown)])


def _cut(line: str) -> str:
    return line if len(line) <= _OUTPUT_WIDTH else line[:_OUTPUT_WIDTH - 3] + "..."


def warning_lines(result: CaseResult) -> list[str]:
    """One line per warning of a case, as a linter prints them: where, what, and the fix."""
    return [redact_text(f"warn  {result.case.case_id}  {v.invariant}: {v.message}"
                        + (f"  (fix: {v.advice})" if v.advice else "")) for v in result.warnings]


def _verdict_lines(verdict: Verdict) -> list[str]:
    lines = [f"  {verdict.invariant}: {verdict.message}"]
    # A checker may repeat its message as the first evidence line; say it once.
    evidence = tuple(line for line in verdict.evidence if line != verdict.message)
    shown = evidence[:_MAX_EVIDENCE]
    lines += [f"      | {line}" for line in shown]
    if len(evidence) > len(shown):
        lines.append(f"      | ... ({len(evidence) - len(shown)} more lines)")
    if verdict.advice:
        lines.append(f"      fix: {verdict.advice}")
    return lines


def _yaml_section(result: CaseResult, scenario: Scenario | None) -> str:
    path = Path(result.case.source)
    try:
        text = read_input(path, MAX_BYTES).decode("utf-8-sig")
    except (OSError, ValueError):  # gone, replaced by a pipe, or not text: show no source
        return ""
    lines = text.splitlines()
    focus = focus_lines(result, scenario) if scenario is not None else set()
    shown = _shown_lines(lines, focus)
    return f"{path}\n" + "\n".join(_numbered(lines, shown, focus))


def focus_lines(result: CaseResult, scenario: Scenario) -> set[int]:
    """The 1-based lines of ``scenario`` a failure points at.

    The tools a failed verdict names (its declaration and every call of it), the
    place each broken invariant's promise is written, and the crash plan when
    the case crashed.
    """
    source = source_of(scenario)
    if source is None:
        return set()
    locs: list[tuple[str | int, ...]] = []
    failed = result.failed_verdicts
    for verdict in failed:
        locs += [loc for loc in _INVARIANT_LOCS.get(verdict.invariant, ())
                 if _written(scenario, loc)]
    for tool in _named_tools(scenario, failed):
        locs += _tool_locs(scenario, tool)
    if result.case.crash is not None:
        locs.append(("crash", "points"))
    return {source.position(loc)[0] for loc in locs}


def _written(scenario: Scenario, loc: tuple[str | int, ...]) -> bool:
    """Whether the file spells out ``loc`` (a field path); defaults have no line to point at."""
    node: object = scenario
    for key in loc:
        if not isinstance(key, str) or key not in getattr(node, "model_fields_set", ()):
            return False
        node = getattr(node, key)
    return True


def _named_tools(scenario: Scenario, verdicts: Iterable[Verdict]) -> list[str]:
    words = " ".join(" ".join((v.message, *v.evidence)) for v in verdicts)
    return [tool for tool in scenario.tools
            if re.search(rf"(?<![\w-]){re.escape(tool)}(?![\w-])", words)]


def _tool_locs(scenario: Scenario, tool: str) -> list[tuple[str | int, ...]]:
    locs: list[tuple[str | int, ...]] = [("tools", tool)]
    for r, reply in enumerate(scenario.model):
        locs += [("model", r, "calls", c) for c, call in enumerate(reply.calls)
                 if call.tool == tool]
    if tool in scenario.expect.side_effects:
        locs.append(("expect", "side_effects", tool))
    return locs


def _shown_lines(lines: list[str], focus: set[int]) -> list[int]:
    """Line numbers to print: the header, the ``expect`` block, and each focus line's context."""
    shown = set(range(1, min(_HEADER_LINES, len(lines)) + 1))
    shown |= _block_of(lines, "expect")
    for line in focus:
        shown |= set(range(max(1, line - _CONTEXT), min(len(lines), line + _CONTEXT) + 1))
    return sorted(shown)


def _block_of(lines: list[str], key: str) -> set[int]:
    """The lines of the top-level ``key:`` block, from its key to the next top-level key."""
    start = next((i for i, line in enumerate(lines, 1) if line.startswith(f"{key}:")), None)
    if start is None:
        return set()
    end = start
    for number in range(start + 1, len(lines) + 1):
        line = lines[number - 1]
        if line and not line[0].isspace() and not line.startswith("#"):
            break
        if line.strip():
            end = number
    return set(range(start, end + 1))


def _numbered(lines: list[str], shown: list[int], focus: set[int]) -> list[str]:
    width = len(str(len(lines)))
    out: list[str] = []
    previous = 0
    for number in shown:
        if number > previous + 1:
            out.append(f"{'...':>{width + 2}}")
        mark = ">" if number in focus else " "
        out.append(f"{mark} {number:>{width}} | {lines[number - 1]}".rstrip())
        previous = number
    return out


# ------------------------------------------------------------------ diagnosis


def diagnosis(result: CaseResult) -> list[str]:
    """What a failure most likely means, in words for someone who did not write the harness.

    Each rule reads the world's record (ledger, requests, incarnations) and
    names the bug class and the usual fix; a failure no rule explains gets none.
    """
    trace = result.trace
    if trace is None or result.status != "fail":
        return []
    return [line for rule in _RULES for line in rule(result, trace)]


def _untargeted_tools(result: CaseResult, scenario: Scenario | None) -> list[str]:
    """For each tool whose own function reached out, the fix at the line that declares it."""
    in_tools = result.trace.extra.foreign_in_tools if result.trace else None
    source = source_of(scenario) if scenario is not None else None
    if not in_tools or scenario is None:
        return []
    lines = []
    for tool in in_tools:
        where = ""
        if source is not None and tool in scenario.tools:
            where = f" ({result.case.source}:{source.position(('tools', tool))[0]})"
        lines.append(f"the tool `{tool}` has no target, so the agent's own function ran and "
                     f"called out{where}: give the tool `{tool}` a `target:` (module:function), "
                     f"or pass `--target {tool}=MODULE:FUNCTION` for a scenario you do not "
                     "edit, so the harness can count its side effects")
    return lines


def _done_twice(result: CaseResult, trace: Trace) -> list[str]:
    keys = Counter(e.key for e in trace.effects if not e.idempotent)
    repeated = [e for e in trace.effects if keys[e.key] > 1]
    if not repeated:
        return []
    tool = repeated[0].tool
    lives = sorted({e.incarnation for e in repeated})
    if len(lives) == 1:
        return [_done_twice_in_one_run(tool, keys[repeated[0].key], trace)]
    crash = result.case.crash.point_id if result.case.crash else "the restart"
    return [f"{tool} ran {keys[repeated[0].key]} times with the same arguments (incarnations "
            f"{', '.join(map(str, lives))}): the crash at {crash} came after the side effect "
            "and before the agent recorded it, and the restarted agent did it again. Record "
            "that a call started before running it, and after a restart check the real state "
            "instead of repeating the call."]


def _done_twice_in_one_run(tool: str, times: int, trace: Trace) -> str:
    """Why one incarnation did a side effect twice: a failure after it took effect (a lost
    answer, seed 000 §4) read as "not done", or a plain repeat."""
    said = f"{tool} ran {times} times with the same arguments in one run, no restart between"
    failed = next((i for i in trace.invocations
                   if i.tool == tool and i.outcome == "error" and not i.refused), None)
    if failed is not None:
        return (f"{said}: {tool} #{failed.seq} failed after its request went out (its "
                "connection was reset, or it timed out) and was made again. Such a failure "
                "leaves the outcome unknown: tell the model so, and check the real state "
                "before repeating the call (seed 000 §4: 是否送达还不清楚).")
    return (f"{said}: the call was repeated. Give it an idempotency key, or check the real "
            "state before repeating it.")


def _broken_restart(result: CaseResult, trace: Trace) -> list[str]:
    crash = result.case.crash
    traceback = trace.extra.agent_traceback or ""
    failed_after = [i for i in trace.incarnations if i.purpose == "run" and i.number > 1
                    and (i.stop_state == "failed" or i.error)]
    if crash is None or not failed_after or not traceback:
        return []
    # SQLite commits whole or not at all (its journal): a restart that fails there read
    # what was committed, and no file advice fits.
    if crash.point_id.startswith("sqlite:"):
        return []
    # Only a file that could not be read calls for this advice, not any failure after it.
    if not any(word in traceback for word in _DECODE_ERRORS):
        return []
    if is_world_point(crash.point_id):
        where = "a file it wrote before the crash"
    else:
        role, _, rest = crash.point_id.partition(":")
        where = f"its '{role}' file (the crash hit its {rest.partition('#')[0]})"
    return [f"the agent failed after restarting from the crash at {crash.point_id} "
            f"({crash.crash_class}): it could not read {where}. A file written in place, "
            "without fsync and an atomic rename, is empty, cut or missing after a crash: "
            "write it to a temporary file, fsync it, os.replace it over the old one and "
            "fsync the folder."]


_GOAL_ADVICE = {
    "stale auto-continue": "re-read the goal before every auto-continue and drop one whose "
    "revision is not the current one (seed 002 §19.3)",
    "held by incarnation": "take the execution lease anew after every restart (the epoch "
    "goes up) and refuse work begun under an older epoch (seed 002 §19.3)",
    "backs the proof": "complete only on the verifier's pass for the current revision; an "
    "unavailable verifier is infra_paused, never complete (seed 002 §19.2)",
    "complete without a proof": "record the completion proof with the goal service before "
    "reporting complete (seed 002 §19.2)",
}


def _goal_lost(result: CaseResult, _trace: Trace) -> list[str]:
    failed = [v for v in result.failed_verdicts if v.invariant in ("I5", "I5:proof")]
    return [f"the goal did not survive: {v.message}. Fix: {advice}."
            for v in failed[:1] for mark, advice in _GOAL_ADVICE.items() if mark in v.message]


_DECODE_ERRORS = ("JSONDecodeError", "UnicodeDecodeError", "EOFError", "UnpicklingError",
                  "Invalid JSON")  # pydantic's own JSON parser (model_validate_json)


def _stream_cut(_result: CaseResult, trace: Trace) -> list[str]:
    outcome = trace.outcome
    if outcome is None or outcome.stop_state == "complete":
        return []
    cut = [r for r in trace.requests if r.status == 200 and r.delivery in ("partial", "broken")
           and CUTTING_FAULTS.intersection(r.faults)]
    if not cut or trace.requests[-1] is not cut[-1]:
        return []
    r = cut[-1]
    return [f"the stream of turn {r.turn} (request #{r.index}) broke after its response began "
            f"({', '.join(r.faults)}), and the run ended there: an SDK retries a request that "
            "failed before its response, not a stream cut in the middle. Retry the whole "
            "attempt yourself, keeping nothing of the cut one."]


def _cut_arguments(_result: CaseResult, trace: Trace) -> list[str]:
    """What the agent did with a tool call cut at the output limit, as the trace shows it:
    ran it, failed parsing or calling it, or refused it and then stopped."""
    cut = [r for r in trace.requests if r.truncated and r.calls and r.complete]
    if not cut:
        return []
    r = cut[0]
    named = cut_at_limit(trace.dialect)
    what = _what_became_of_cut_calls(trace, r)
    if what is None:
        return []
    opening = (f"turn {r.turn}'s answer was cut at the output limit ({named}) in the middle of "
               f"a tool call's arguments, and ")
    if what.startswith("the agent ran none"):
        return [opening + what + ": refusing them was right; tell the model its answer was "
                "cut and ask again instead of stopping."]
    field = named.split(" ")[0]  # the field that says so: finish_reason, stop_reason, …
    return [opening + what + f". Check {field} before parsing or running tool calls."]


def _what_became_of_cut_calls(trace: Trace, cut: RequestRecord) -> str | None:
    """The agent's handling of ``cut``'s calls in the trace's words; None: nothing to explain."""
    ids = {c.call_id for c in cut.calls}
    whole = {c.call_id for c in cut.calls if c.arguments() is not None}
    ran = [i for i in trace.invocations if not i.refused and i.call_id in ids]
    if any(i.call_id not in whole for i in ran):
        return f"the agent ran {', '.join(sorted({i.tool for i in ran}))} with them anyway"
    if ran:
        return (f"the agent ran {', '.join(sorted({i.tool for i in ran}))}, whose arguments "
                "came through whole, anyway: no call of an answer cut at the limit may run")
    error = _last_line(trace.extra.agent_traceback or "")
    if not error:
        return None
    kind = error.partition(":")[0].rpartition(".")[2]
    if any(word in error for word in _DECODE_ERRORS):
        return f"the agent parsed them anyway and failed ({kind})"
    called = [c.name for c in cut.calls if re.search(rf"\b{re.escape(c.name)}\(", error)]
    if called:
        return f"the agent called {called[0]} with them anyway and it failed ({kind})"
    return f"the agent ran none of its calls and stopped ({error})"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _stalled_forever(_result: CaseResult, trace: Trace) -> list[str]:
    error = trace.error or ""
    if "still running after" not in error and "no read timeout" not in error:
        return []
    return ["the run never ended: a stream stalled with the connection open and nothing gave "
            "up on it. Configure a read timeout on the client (or an idle watchdog)."]


def _plain_after_disk_error(result: CaseResult, trace: Trace) -> list[str]:
    """I4 failed for a plain agent after its disk error: say what a plain agent can say and
    the key that expects it."""
    failed = [v for v in result.failed_verdicts if v.invariant == "I4"]
    if not failed or not trace.extra.plain or not trace.crash.disk_error_raised:
        return []
    assert trace.outcome is not None
    stop, expected = trace.outcome.stop_state, trace.expect.stop_state_after_disk_error
    opening = (f"the agent's write failed at {trace.crash.fired} and it stopped {stop!r}; a "
               "plain main(prompt) can only return (complete) or raise (failed), so after a "
               "disk error it is expected to fail, without a duplicate side effect and "
               "losing nothing it acknowledged")
    if stop == "complete":
        return [opening + ". It carried on instead: let the OSError propagate (or raise) "
                "before any further side effect; if carrying on is right for this agent, "
                "write expect.stop_state_after_disk_error: complete in the scenario."]
    if expected not in ("complete", "failed"):
        return [opening + f". The scenario expects {expected!r}, which a plain agent cannot "
                "end in: drop expect.stop_state_after_disk_error (a plain agent is then "
                "expected to fail) or write it as failed."]
    return [opening + f". The scenario's expect.stop_state_after_disk_error says {expected!r}: "
            "drop it to expect the failure, or make the agent carry on."]


_RULES: tuple[Callable[[CaseResult, Trace], list[str]], ...] = (
    _done_twice, _broken_restart, _stream_cut, _cut_arguments, _stalled_forever, _goal_lost,
    _plain_after_disk_error)
