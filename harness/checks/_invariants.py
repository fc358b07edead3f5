"""One small function per invariant (DESIGN §6), each over a finished :class:`Trace`.

Each returns a :class:`Verdict`: ``pass``, ``fail`` with evidence lines
(ledger rows, requests, transcript excerpts), or ``unknown`` when what the
invariant is about never happened in this run — a scenario never passes
vacuously (DESIGN §3). Seed 002 §19.6 names the suite's musts: the transcript
is well formed, a saved result is read not re-run, an unknown outcome is not
blindly retried, an external effect is not repeated, an infrastructure failure
is never marked complete, usage is committed once, half arguments never run, a
failed attempt is never joined to a retry's output.

Example::

    verdicts = check_trace(trace)
    failed = [v for v in verdicts if v.status == "fail"]
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, cast

from harness.checks._always import always_verdicts
from harness.checks._budgets import UNTOLD_BUDGET
from harness.checks._goals import check_i5, expected_stop_state, goal_verdicts
from harness.checks._hooks import is_hook_run
from harness.checks._loop_guard import check_l3
from harness.checks._tolerance import late_tolerance
from harness.checks._training import left_unanswered
from harness.checks._verdict import Verdict
from harness.ports import (
    PURE_TOOL_KINDS,
    TOOL_KIND_TRAITS,
    asked_for,
    cut_at_limit,
    idempotency_key,
    reply_failed,
)
from harness.trace import MessageRecord, RequestRecord, SentUsage, Trace, request_turn

_MAX_EVIDENCE = 12


def _pass(invariant: str, message: str, evidence: Iterable[str] = ()) -> Verdict:
    return Verdict(invariant, "pass", message, tuple(evidence)[:_MAX_EVIDENCE])


def _fail(invariant: str, message: str, evidence: Iterable[str] = ()) -> Verdict:
    return Verdict(invariant, "fail", message, tuple(evidence)[:_MAX_EVIDENCE])


def _unknown(invariant: str, message: str) -> Verdict:
    return Verdict(invariant, "unknown", message)


def _no_outcome(invariant: str, trace: Trace) -> Verdict | None:
    if trace.outcome is None:
        return _unknown(invariant, f"the run produced no outcome ({trace.error or 'no stop'})")
    return None


def _request_line(trace: Trace, r: RequestRecord) -> str:
    return (f"request #{r.index} {request_turn(trace, r)} incarnation {r.incarnation} "
            f"at {r.started_at:g}s: {r.delivery}{' truncated' if r.truncated else ''}"
            f"{' faults ' + ','.join(r.faults) if r.faults else ''}")


def _message_line(m: MessageRecord) -> str:
    if m.role == "tool":
        return f"tool reply {m.call_id} status={m.status}{' (synthetic)' if m.synthetic else ''}"
    calls = ", ".join(f"{c.name}#{c.call_id}" for c in m.tool_calls)
    return f"{m.role} {m.turn_id}: {m.text[:60]!r}" + (f" calls [{calls}]" if calls else "")


# ------------------------------------------------------------------------- I1


def check_i1(trace: Trace) -> Verdict:
    """No non-idempotent side effect is applied twice (ledger, by idempotency key)."""
    effects = [e for e in trace.effects if not e.idempotent]
    if not effects:
        return _unknown("I1", "no non-idempotent side effect was applied")
    counts = Counter(e.key for e in effects)
    twice = {k for k, n in counts.items() if n > 1}
    if twice:
        rows = [f"ledger #{e.seq} {e.tool} key={e.key} incarnation {e.incarnation} at {e.at:g}s"
                for e in effects if e.key in twice]
        return _fail("I1", f"{len(twice)} non-idempotent effect(s) applied more than once", rows)
    return _pass("I1", f"{len(effects)} non-idempotent effect(s), each applied once")


# ------------------------------------------------------------------------- I2


def check_i2(trace: Trace) -> Verdict:
    """The transcript is well formed: each call has exactly one reply, right after it, in order."""
    missing = _no_outcome("I2", trace)
    if missing:
        return missing
    assert trace.outcome is not None
    messages = trace.outcome.transcript
    if not any(m.tool_calls for m in messages):
        return _unknown("I2", "the transcript holds no tool call")
    problems = _transcript_problems(messages)
    if problems and (_disk_stopped(trace) or _stopped_unpatched(trace)):
        # J6: when the disk fails the reply of the last call may be unwritable;
        # the next recovery repairs it (J5), so only earlier gaps count. Collecting
        # training data, a run stops rather than patch its last calls (train:no-patch).
        last = [m for m in messages if m.role == "assistant"][-1]
        problems = [p for p in problems if not any(f"call {c.call_id} has no reply" == p
                                                   for c in last.tool_calls)]
    if problems:
        return _fail("I2", problems[0], [*problems, *(_message_line(m) for m in messages)])
    calls = sum(len(m.tool_calls) for m in messages)
    return _pass("I2", f"{calls} tool call(s), each with exactly one reply in order")


def _disk_stopped(trace: Trace) -> bool:
    """The disk error was raised and the agent stopped short of completing (J6)."""
    outcome = trace.outcome
    return trace.crash.disk_error_raised and outcome is not None and \
        outcome.stop_state != "complete"


def _stopped_unpatched(trace: Trace) -> bool:
    """A session collected as training data stopped short of completing: a call a crash
    left without its result stays unanswered rather than get a placeholder (seed 002
    §19.1 ①, 训练数据收集模式则拒绝修补)."""
    outcome = trace.outcome
    return bool(trace.extra.training_data) and outcome is not None and \
        outcome.stop_state != "complete"


def _transcript_problems(messages: tuple[MessageRecord, ...]) -> list[str]:
    problems: list[str] = []
    expected: list[str] = []
    replied: list[str] = []
    seen: set[str] = set()
    for m in messages:
        if m.role == "assistant":
            problems += _unanswered(expected, replied)
            expected, replied = [c.call_id for c in m.tool_calls], []
        elif m.role == "tool":
            cid = m.call_id or ""
            if cid in seen:
                problems.append(f"call {cid} has more than one reply")
            elif cid not in expected:
                problems.append(f"reply {cid} answers no call of the assistant message before it")
            seen.add(cid)
            replied.append(cid)
    problems += _unanswered(expected, replied)
    return problems


def _unanswered(expected: list[str], replied: list[str]) -> list[str]:
    problems = [f"call {cid} has no reply" for cid in expected if cid not in replied]
    in_order = [cid for cid in replied if cid in expected]
    if not problems and in_order != [cid for cid in expected if cid in in_order]:
        problems.append(f"replies {in_order} are not in the calls' order {expected}")
    return problems


# ------------------------------------------------------------------------- I3


def check_i3(trace: Trace) -> Verdict:
    """An ``unknown_after_restart`` call is never repeated before the state was inspected.

    Two ways to repeat: the world sees the same call id run again in a later
    incarnation with no read/inspect in between (a blind re-run in recovery),
    or the transcript has a later call of the same tool and arguments before
    any read/inspect call (the model was led to repeat it).
    """
    pure = set(trace.expect.pure_tools)
    reruns = _world_reruns(trace, pure)
    if reruns:
        return _fail("I3", "a call whose outcome was unknown ran again before any inspection",
                     reruns)
    unknown = _unknown_replies(trace)
    if not unknown:
        return _unknown("I3", "no call ended unknown_after_restart in this run")
    repeats = _transcript_repeats(trace, unknown, pure)
    if repeats:
        return _fail("I3", "the model repeated a call of unknown outcome before inspecting",
                     repeats)
    return _pass("I3", f"{len(unknown)} unknown call(s), none repeated before an inspection")


def _world_reruns(trace: Trace, pure: set[str]) -> list[str]:
    if trace.extra.plain:
        # A plain agent keeps its own records: a call it asked for before a crash and
        # runs after it may be one it knows never started. Only a call the world saw
        # run before is, from the outside, a repeat.
        return _same_call_again(trace, pure)
    return _same_call_again(trace, pure) + _call_from_a_past_life(trace, pure)


def _call_from_a_past_life(trace: Trace, pure: set[str]) -> list[str]:
    """Invocations of a call the model asked for only in an earlier incarnation.

    Recovery that runs such a call itself, before any read or inspect in its
    own incarnation, repeats it blindly whatever the journal said.
    """
    asked: dict[str, set[int]] = {}
    for r in trace.requests:
        if r.committable:
            for call in r.calls:
                asked.setdefault(call.call_id, set()).add(r.incarnation)
    inspected: set[int] = set()
    found = []
    for inv in trace.invocations:
        if inv.refused:
            continue
        if inv.tool in pure:
            inspected.add(inv.incarnation)
            continue
        lives = asked.get(inv.call_id, set())
        if lives and inv.incarnation not in lives and inv.incarnation not in inspected:
            found.append(f"invocation #{inv.seq} {inv.tool} call {inv.call_id} ran in "
                         f"incarnation {inv.incarnation}, asked for only in {sorted(lives)}")
    return found


def _same_call_again(trace: Trace, pure: set[str]) -> list[str]:
    last_run: dict[str, int] = {}
    inspected_since: dict[str, bool] = {}
    found: list[str] = []
    for inv in trace.invocations:
        if inv.refused:
            continue
        if inv.tool in pure:
            inspected_since = dict.fromkeys(inspected_since, True)
            continue
        stem = call_stem(inv.call_id)
        before = last_run.get(stem)
        if before is not None and before < inv.incarnation and not inspected_since[stem]:
            found.append(f"invocation #{inv.seq} {inv.tool} call {inv.call_id} ran again in "
                         f"incarnation {inv.incarnation} (first in {before})")
        last_run[stem] = inv.incarnation
        inspected_since[stem] = False
    return found


_AGAIN = re.compile(r"_r\d+$")


def call_stem(call_id: str) -> str:
    """The id the scripted model gave a turn's call first: ``call_t1_0_r1`` is ``call_t1_0``
    asked again (after a restart whose request left the first out, the model gives the
    same call a fresh id).

    >>> call_stem("call_t1_0_r2"), call_stem("toolu_t3_1")
    ('call_t1_0', 'toolu_t3_1')
    """
    return _AGAIN.sub("", call_id)


def _unknown_replies(trace: Trace) -> list[MessageRecord]:
    if trace.outcome is None:
        return []
    return [m for m in trace.outcome.transcript if m.role == "tool" and m.status == "unknown"]


def _transcript_repeats(trace: Trace, unknown: list[MessageRecord], pure: set[str]) -> list[str]:
    assert trace.outcome is not None
    messages = trace.outcome.transcript
    calls = {c.call_id: (c.name, c.arguments) for m in messages for c in m.tool_calls}
    found = []
    for reply in unknown:
        target = calls.get(reply.call_id or "")
        start = messages.index(reply)
        for m in messages[start + 1:]:
            if any(c.name in pure for c in m.tool_calls):
                break
            if target and any((c.name, c.arguments) == target for c in m.tool_calls):
                found.append(f"{_message_line(m)} repeats {reply.call_id} ({target[0]})")
    return found


# ------------------------------------------------------------------------- I4


def check_i4(trace: Trace) -> Verdict:
    """The stop state is the expected one, and never ``complete`` after an infrastructure failure.

    ``complete`` also needs the world's evidence: the run's last request was a
    whole, untruncated answer without tool calls (the model really finished).
    Once the case's disk error (EIO, ENOSPC) was raised the trusted log cannot be
    written, so the run must end in exactly the scenario's
    ``stop_state_after_disk_error`` (seed 002 §19.6: "会话可信记录写入失败时,继续执行有副作用的
    动作之前必须停止"); a final answer already in hand does not make it ``complete``.
    """
    missing = _no_outcome("I4", trace)
    if missing:
        return missing
    assert trace.outcome is not None
    stop = trace.outcome.stop_state
    if trace.crash.disk_error_raised:
        return _i4_after_disk_error(trace, stop)
    if stop == "complete":
        failure = _completion_contradiction(trace)
        if failure:
            return _fail("I4", failure, [_request_line(trace, r) for r in trace.requests[-4:]])
    expected = expected_stop_state(trace)
    unsettled = left_unanswered(trace) if stop == "blocked" else []
    if unsettled and expected != stop:
        # Truncation level 4: collecting training data, a call in doubt stops the run
        # rather than get a placeholder reply, whatever the scenario ends in otherwise.
        return _pass("I4", f"stopped 'blocked' rather than patch {unsettled[0]}, the session "
                     "being collected as training data (truncation level 4)")
    if expected is None:
        return _unknown("I4", "the scenario's stop depends on its goal's verifier and lease, and "
                        "the agent never called the goal port (AgentPorts.goals)")
    if stop == expected:
        return _pass("I4", f"stopped {stop!r} (expected {expected!r})")
    if expected == "budget_limited" and trace.extra.plain:
        # Only the run's budget ends it so, and a plain main(prompt) is never told it.
        return _unknown("I4", f"stopped {stop!r}; 'budget_limited' is the stop at the run's "
                        f"budget, and {UNTOLD_BUDGET}")
    if expected == "budget_limited" and not trace.jobs and (
            trace.extra.max_job_seconds is not None or trace.extra.max_jobs is not None
            or trace.extra.max_job_output_lines is not None):
        # Only the background budget ends it so, and the agent ran no job through the
        # job port (optional): the budget was never tested.
        return _unknown("I4", f"stopped {stop!r}; 'budget_limited' is the stop at the run's "
                        "background budget, and the agent started no job through the job "
                        "port (AgentPorts.jobs; optional, seed 002 §19.4)")
    if expected == "cancelled" and trace.extra.cancel_hook is False:
        # Only a cancel could end it so, and the agent offers no hook for one (optional).
        return _unknown("I4", f"stopped {stop!r}; 'cancelled' is reached through the agent's "
                        "cancel hook, which it does not offer (seed 002 §19.4)")
    return _fail("I4", f"stopped {stop!r}, expected {expected!r}",
                 [f"reason: {trace.outcome.reason}"])


def _i4_after_disk_error(trace: Trace, stop: str) -> Verdict:
    """The stop once the trusted log failed a write: the scenario's
    ``stop_state_after_disk_error``. A plain ``main(prompt)`` fails by raising, and an
    exception it raises reads as ``infra_paused`` when it is an infrastructure error's:
    expected to fail, either is the failure it can express."""
    assert trace.outcome is not None
    expected = trace.expect.stop_state_after_disk_error
    accepted = {expected}
    if trace.extra.plain and expected == "failed":
        accepted.add("infra_paused")
    if stop not in accepted:
        return _fail("I4", f"stopped {stop!r} after the trusted log failed a write at "
                     f"{trace.crash.fired}, expected {expected!r}",
                     [f"reason: {trace.outcome.reason}"])
    return _pass("I4", f"stopped {stop!r} after the disk error at {trace.crash.fired} "
                 f"(expected {expected!r})")


def _completion_contradiction(trace: Trace) -> str | None:
    """Why the world contradicts a ``complete`` stop, in the words of what it saw; None: it
    does not.

    A run may end on a final tool call (smolagents' ``final_answer``, structured output
    delivered as a tool call by pydantic-ai or the OpenAI Agents SDK): the last answer
    is whole and holds tool calls, the agent returned a final answer, and no request
    follows. An answer cut at the output limit is no infrastructure failure: the report
    names the cut by the dialect's own word for it.
    """
    assert trace.outcome is not None
    if trace.outcome.infra_failure:
        return ("complete after an infrastructure failure: the agent itself reports an "
                "infrastructure failure")
    live = [r for r in trace.requests if r.delivery != "refused"]
    if not live:
        return _unasked_completion(trace)
    last = live[-1]
    if not last.complete:
        return _cut_completion(trace, last)
    if last.truncated:
        return (f"complete, but the last answer (turn {last.turn}) was cut at the output limit "
                f"({cut_at_limit(trace.dialect)}): the model never finished")
    if last.calls and trace.extra.final_answer is None:
        calls = ", ".join(f"{c.name}#{c.call_id}" for c in last.calls)
        return (f"complete, but the last answer (turn {last.turn}) asked for tool call(s) "
                f"{calls} and the run ended without a final answer")
    return None


def _cut_completion(trace: Trace, last: RequestRecord) -> str:
    """Why a ``complete`` stop after a last request that never ended whole is wrong: a fault
    the provider sent is an infrastructure failure; a request cut only by the crash that
    killed its process, in an earlier incarnation, is the crash's."""
    crash = trace.crash
    if not last.faults and last.incarnation != trace.final_incarnation \
            and crash.fired is not None and not crash.error_class:
        return (f"complete, but the last request (incarnation {last.incarnation}) ended "
                f"{last.delivery} when the crash killed its process, and the restarted agent "
                "returned a final answer without asking the model again")
    return f"complete after an infrastructure failure: the last request ended {last.delivery}"


def _unasked_completion(trace: Trace) -> str:
    """Why a ``complete`` stop no model answer backs is wrong, in the words of the trace: no
    request reached the model, so no infrastructure failed either; a crash may be why the
    agent thought it was done (a restart that found a checkpoint and returned from it).
    The crash point is left to the report's own line, so cases crashed at different points
    that broke alike are told once."""
    refused = len(trace.requests)
    said = "complete, but no request reached the model" + (
        f" ({refused} refused before it)" if refused else "")
    crash = trace.crash
    if crash.fired is not None and not crash.error_class:
        return (f"{said}: the agent, restarted after the crash, returned a final answer the "
                "model never gave")
    return f"{said}: the agent returned a final answer the model never gave"


# ------------------------------------------------------------------------- I6


def check_i6(trace: Trace) -> Verdict:
    """Each attempt's usage is counted once: the billed usage agrees with the provider's record.

    Decided per token kind (input, output) over the usage that reached the
    client (``usage_seen``: the usage events among the bytes each attempt was
    sent, so an attempt that broke after its usage arrived counts and one cut
    before it does not). With L the sum over the FINAL incarnation's attempts
    and U the sum over every attempt of every incarnation, the billed count must
    satisfy L <= billed <= U; without a crash L = U and the bill is exact. Below
    L an attempt was dropped; above U one was counted twice (earlier
    incarnations' attempts may or may not have been restored from disk, hence
    the range). ``unknown`` when no usage reached the client.
    """
    missing = _no_outcome("I6", trace)
    if missing:
        return missing
    assert trace.outcome is not None
    lower = _seen_sum(r for r in trace.requests if r.incarnation == trace.final_incarnation)
    upper = _seen_sum(trace.requests)
    if upper == (0, 0):
        return _unknown("I6", "no attempt's usage reached the client")
    if trace.outcome.billed_usage is None and trace.extra.plain:
        return _unknown("I6", "the agent reports no usage: return an AgentOutcome with "
                        "billed_usage to have each attempt's usage checked")
    billed = _tokens(trace.outcome.billed_usage)
    evidence = [f"billed input={billed[0]} output={billed[1]}",
                f"usage that reached the final incarnation: input={lower[0]} output={lower[1]}",
                f"usage that reached any incarnation: input={upper[0]} output={upper[1]}"]
    for kind, b, lo, hi in zip(("input", "output"), billed, lower, upper, strict=True):
        if b > hi:
            return _fail("I6", f"{kind} tokens billed {b} exceed the {hi} that ever reached "
                         "the client: an attempt was counted twice", evidence)
        if b < lo:
            return _fail("I6", f"{kind} tokens billed {b} are below the {lo} that reached "
                         "the client: an attempt's usage was dropped", evidence)
    return _pass("I6", "billed usage lies within the provider's record", evidence)


def _seen_sum(requests: Iterable[RequestRecord]) -> tuple[int, int]:
    seen = [r.usage_seen for r in requests if r.usage_seen is not None]
    return sum(u.input_tokens for u in seen), sum(u.output_tokens for u in seen)


def _tokens(usage: SentUsage | None) -> tuple[int, int]:
    return (0, 0) if usage is None else (usage.input_tokens, usage.output_tokens)


# ------------------------------------------------------------------------- I7


def check_i7(trace: Trace) -> Verdict:
    """No tool ran with arguments from a truncated or incomplete attempt.

    Every invocation's call id must come from a whole, untruncated answer whose
    arguments parse, and the arguments it ran with must be those: each one the model
    sent, unchanged. One the agent adds on top (an ``idempotency_key``) does not make
    it another call (:func:`harness.ports.asked_for`). A run of the scenario's hook tool
    under an id no answer sent is the agent's hook, a read, and not judged here (L3:hook).
    A tool no answer called at all, run while no answer with calls was cut, ran from the
    model's text (smolagents' CodeAgent runs the code it writes): not judged either.
    ``unknown`` when no answer with tool calls was truncated or cut short.
    """
    risky = [r for r in trace.requests if r.calls and not r.committable]
    good: dict[str, list[object]] = {}
    for r in trace.requests:
        if r.committable:
            for call in r.calls:
                parsed = call.arguments()
                if parsed is not None:
                    good.setdefault(call.call_id, []).append(parsed)
    # A tool of which no answer sent a call at all ran from the model's text (code that
    # smolagents' CodeAgent runs): no cut call can have given it its arguments unless an
    # answer with calls was cut.
    called = {call.name for r in trace.requests for call in r.calls}
    bad = [f"invocation #{inv.seq} {inv.tool} call {inv.call_id} args {_canonical(inv.arguments)}"
           for inv in trace.invocations
           if not inv.refused and not is_hook_run(trace, inv)
           and (risky or inv.tool in called)
           and not any(asked_for(asked, inv.arguments) for asked in good.get(inv.call_id, []))]
    if bad:
        return _fail("I7", "a tool ran with arguments no complete answer sent",
                     [*bad, *(_request_line(trace, r) for r in risky)])
    if not risky:
        return _unknown("I7", "no answer with tool calls was truncated or incomplete")
    return _pass("I7", f"{len(risky)} truncated or incomplete answer(s); none of their calls ran")


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)


# ------------------------------------------------------------------------- I8


def check_i8(trace: Trace) -> Verdict:
    """No committed assistant message joins output from two attempts.

    The k-th assistant message answers turn k; its text must be the whole text
    of one complete answer of that turn (or a truncated answer's text followed
    by its continuation's, the one sanctioned merge, S6), and no two committed
    messages share an attempt id. Tool calls the agent echoed back as text
    (smolagents' "Calling tools: [...]") are its own record of the answer's calls,
    not text joined from another attempt. ``unknown`` when no attempt broke off
    after sending text (there was nothing to join).
    """
    missing = _no_outcome("I8", trace)
    if missing:
        return missing
    assert trace.outcome is not None
    partial = [r for r in trace.requests if r.delivery in ("partial", "broken") and r.text]
    bad = _joined_messages(trace)
    if bad:
        return _fail("I8", "a committed message is not the text of one attempt",
                     [*bad, *(_request_line(trace, r) for r in partial)])
    ids = Counter(m.attempt_id for m in trace.outcome.transcript
                  if m.role == "assistant" and m.attempt_id)
    shared = [f"attempt {a} committed {n} times" for a, n in ids.items() if n > 1]
    if shared:
        return _fail("I8", "two committed messages share one attempt id", shared)
    if not partial:
        return _unknown("I8", "no attempt broke off after sending text")
    return _pass("I8", f"{len(partial)} broken attempt(s); no committed message joins them")


def _joined_messages(trace: Trace) -> list[str]:
    assert trace.outcome is not None
    assistants = [m for m in trace.outcome.transcript if m.role == "assistant"]
    stops = trace.extra.stop_sequences or ()
    bad = []
    for turn, message in enumerate(assistants, start=1):
        answers = [r for r in trace.requests if r.turn >= turn and r.complete]
        texts = {r.text for r in answers if r.turn == turn}
        texts |= {a.text + b.text for a in answers if a.turn == turn and a.truncated
                  for b in answers if b.index > a.index}
        # A stop sequence the API left out, put back by the agent after the answer's text.
        texts |= {t + stop for t in texts for stop in stops}
        said = _without_echoed_calls(message.text)
        if said and said not in texts and said not in {t.strip() for t in texts}:
            bad.append(f"{_message_line(message)} (turn {turn}) matches no complete answer")
    return bad


# smolagents keeps the calls an answer made as assistant text, "Calling tools:\n[{…}]",
# after the answer's own text; the echo is the agent's note of the calls, not model text.
_CALLS_ECHO = "Calling tools:"


def _without_echoed_calls(text: str) -> str:
    """The message's text without tool calls the agent echoed back as text (stripped, when
    there was an echo: the agent joined the two with its own line breaks)."""
    head, echo, _ = text.partition(_CALLS_ECHO)
    return head.strip() if echo else text


# ------------------------------------------------------------------------- I9


def check_i9(trace: Trace) -> Verdict:
    """Retries and waits stay inside the shared deadline and attempt budget (S8).

    Every request starts before the deadline (virtual time from the run's start,
    kept across restarts), and the requests of the whole run, every
    incarnation included, number at most ``max_attempts``. ``unknown`` when
    nothing was retried, or for a plain ``main(prompt)``, which is never told the budget.
    """
    live = [r for r in trace.requests if r.delivery != "refused"]
    deadline, cap = trace.expect.deadline_seconds, trace.expect.max_attempts
    if trace.extra.plain:
        return _unknown("I9", f"{UNTOLD_BUDGET} (max_attempts {cap}, deadline {deadline:g}s): "
                        f"its {len(live)} request(s) are not judged against it")
    # Served on real time, a request may be late by a real process's jitter.
    late = [_request_line(trace, r) for r in live
            if r.started_at > deadline + late_tolerance(trace)]
    if late:
        return _fail("I9", f"{len(late)} request(s) started after the {deadline:g}s deadline",
                     late)
    if len(live) > cap:
        return _fail("I9", f"{len(live)} requests exceed the budget of {cap} attempts",
                     [_request_line(trace, r) for r in live[cap:]])
    if not any(r.attempt > 1 for r in live):
        return _unknown("I9", "no request was retried")
    return _pass("I9", f"{len(live)} request(s) by {max(r.started_at for r in live):g}s, "
                 f"inside {cap} attempts and {deadline:g}s")


# ------------------------------------------------------------------------ I10


def check_i10(trace: Trace) -> Verdict:
    """Each side effect the model was told is done (an ``ok`` reply) is in the ledger, once.

    The model reads the reply's text, not the agent's own status beside it: a reply
    whose text reports an error (a framework's error wording, an exception, an
    ``{"error": …}`` object; :func:`harness.ports.reply_failed`) told it nothing was done.
    """
    missing = _no_outcome("I10", trace)
    if missing:
        return missing
    assert trace.outcome is not None
    kinds = dict(trace.expect.tool_kinds)
    transcript = trace.outcome.transcript
    calls = {c.call_id: (c.name, c.arguments) for m in transcript for c in m.tool_calls}
    done = [(m, calls[m.call_id]) for m in transcript
            if m.role == "tool" and m.status == "ok" and not reply_failed(m.text)
            and m.call_id in calls and _changes_the_world(kinds.get(calls[m.call_id][0]))]
    if not done:
        return _unknown("I10", "no side effect was reported done")
    # Each ok reply stands for an effect of its own: a recovery that calls an unknown
    # send done, followed by a real send with the same arguments, leaves one effect for
    # two replies, and the first reply was never true.
    left = Counter(e.key for e in trace.effects)
    lost = []
    for m, (tool, args) in done:
        key = idempotency_key(tool, _ran_with(trace, m.call_id, args))
        if left[key] > 0:
            left[key] -= 1
        else:
            lost.append(f"{_message_line(m)}: {tool} {args} not in the ledger")
    if lost:
        return _fail("I10", "an effect reported done is missing from the ledger", lost)
    return _pass("I10", f"{len(done)} effect(s) reported done, each in the ledger")


def _ran_with(trace: Trace, call_id: str | None, arguments: str) -> dict[str, Any]:
    """The arguments a reported call ran with, as the world saw them: the ledger keys an
    effect by those, which may hold more than the transcript's (an idempotency key the
    agent added) or less (a secret it redacted there, J3). The transcript's when the
    call never ran (its ``ok`` was never true, and the key will not be found)."""
    ran = [i.arguments for i in trace.invocations if i.call_id == call_id and not i.refused]
    return ran[-1] if ran else cast(dict[str, Any], json.loads(arguments))


def _changes_the_world(kind: str | None) -> bool:
    # An undeclared tool, or a pure one (read, inspect), leaves nothing in the ledger.
    return kind in TOOL_KIND_TRAITS and kind not in PURE_TOOL_KINDS


# ------------------------------------------------------------------------ I11


def check_i11(trace: Trace) -> Verdict:
    """Recovering twice equals recovering once.

    After the final run, ``recover()`` ran on two fresh incarnations over the same
    durable state: the second must report nothing to repair, write nothing
    (the files' digest is unchanged) and neither may call the model or a tool.
    """
    if trace.extra.plain:
        return _unknown("I11", "a plain main(prompt) recovers inside its run: there is no "
                        "recover() to call twice (implement the Agent protocol to have it checked)")
    if len(trace.recoveries) < 2:
        return _unknown("I11", "recovery was not run twice")
    first, second = trace.recoveries[0], trace.recoveries[1]
    problems = [f"recover #{n} failed: {r.error}" for n, r in enumerate((first, second), 1)
                if r.error]
    if second.changed:
        problems.append(f"the second recover still repaired: unknown={second.unknown} "
                        f"not_started={second.not_started} replies={second.repaired_replies}")
    if second.files_sha256 != first.files_sha256:
        problems.append("the second recover changed the files on disk")
    problems += [f"recover #{n} made {r.requests_during} request(s), "
                 f"{r.effects_during} side effect(s)"
                 for n, r in enumerate((first, second), 1) if r.requests_during or r.effects_during]
    if problems:
        return _fail("I11", problems[0], problems)
    return _pass("I11", "a second recover found nothing to do and wrote nothing")


# ------------------------------------------------------------------ side effects


def check_side_effects(trace: Trace) -> Verdict | None:
    """The ledger holds exactly the expected side effects per tool (None: nothing expected).

    A non-idempotent tool counts every effect; an idempotent one (``put``)
    counts distinct keys, since repeating it is harmless by definition. Once the
    case's disk error was raised (J6) the run stops where the error met it, so
    the exact expectation is the ledger as it stood then: the effects of calls
    started before the error, none after, and never more than declared.
    """
    expected = dict(trace.expect.side_effects)
    if not expected:
        return None
    counts = {tool: _effect_count(trace, tool) for tool in expected}
    if trace.crash.disk_error_raised:
        wrong = _effects_after_disk_error(trace, counts, expected)
    else:
        wrong = [f"{tool}: {counts[tool]} effect(s), expected {n}"
                 for tool, n in expected.items() if counts[tool] != n]
    if wrong:
        rows = [f"ledger #{e.seq} {e.tool} key={e.key} incarnation {e.incarnation}"
                for e in trace.effects]
        return _fail("side_effects", wrong[0], [*wrong, *rows])
    return _pass("side_effects", ", ".join(f"{t}={n}" for t, n in sorted(counts.items())))


def _effects_after_disk_error(trace: Trace, counts: dict[str, int],
                              expected: dict[str, int]) -> list[str]:
    """What breaks "the ledger as it stood at the disk error": effects after it, or too many."""
    late = Counter(i.tool for i in trace.invocations
                   if i.after_disk_error and not i.refused and i.outcome == "ok"
                   and i.tool in expected and i.kind not in PURE_TOOL_KINDS)
    wrong = [f"{tool}: {n} effect(s) after the disk error at {trace.crash.fired}, expected "
             "none (the trusted log could not record them)" for tool, n in sorted(late.items())]
    return wrong + [f"{tool}: {counts[tool]} effect(s), expected at most {n} (the run stopped "
                    f"at the disk error at {trace.crash.fired})"
                    for tool, n in expected.items() if counts[tool] > n]


def _effect_count(trace: Trace, tool: str) -> int:
    effects = [e for e in trace.effects if e.tool == tool]
    if effects and effects[0].idempotent:
        return len({e.key for e in effects})
    return len(effects)


# ---------------------------------------------------------------------- all


CHECKS: dict[str, Callable[[Trace], Verdict]] = {
    "I1": check_i1, "I2": check_i2, "I3": check_i3, "I4": check_i4, "I5": check_i5,
    "I6": check_i6,
    "I7": check_i7, "I8": check_i8, "I9": check_i9, "I10": check_i10, "I11": check_i11,
    "L3": check_l3,
}
"""Every checker by invariant id."""


def check_tool_names(trace: Trace) -> Verdict | None:
    """The scenario's model calls only tools the agent offered it (a scenario fit for the agent).

    A call to a tool the agent offered in another request of the case but not in the
    one answered (a tool lost on a restart, or dropped between turns) fails: a real model
    could not have made it, so the agent broke its own conversation. Unless the answered
    request offers a tool list the agent offered before: the agent is at a step it took
    before (a triage agent that hands off, met again after a restart), and the call is
    the script's, not fit for that step: ``unknown``. A call to a tool
    the agent offers in no request of the case is ``unknown``: the scenario was written
    for another agent (a shipped one, for the reference agent's tools), and every
    verdict about that call would judge the mismatch, not the agent.
    """
    missing: dict[str, tuple[str, ...]] = {}
    offered_anywhere: set[str] = set()
    # Tool lists the agent offered before, and the calls answered in a request whose list
    # is one of them: the agent back at a step it took before (the triage agent a
    # hand-off starts from, after a restart), which the script does not follow.
    lists_seen: set[frozenset[str]] = set()
    at_a_known_step: dict[str, tuple[str, ...]] = {}
    for r in trace.requests:
        if r.offered_tools is None:
            continue
        offered_anywhere.update(r.offered_tools)
        known = frozenset(r.offered_tools) in lists_seen
        lists_seen.add(frozenset(r.offered_tools))
        for call in r.calls:
            if call.name not in r.offered_tools:
                missing.setdefault(call.name, r.offered_tools)
                if known:
                    at_a_known_step.setdefault(call.name, r.offered_tools)
    if not missing:
        return None
    # A tool offered in no request is no step the script failed to follow, even where a
    # list came again (the same request retried after a 429, a restart from the prompt).
    at_a_known_step = {name: offered for name, offered in at_a_known_step.items()
                       if name in offered_anywhere}
    dropped = {name: offered for name, offered in missing.items()
               if name in offered_anywhere and name not in at_a_known_step}
    if dropped:
        return _fail("tools", f"the scenario's model calls {sorted(dropped)}, which the agent "
                     "offered in an earlier request of this case but not in the one it "
                     "answered: keep offering every tool a conversation has used (a restart "
                     "must rebuild the same tool list)", _offer_lines(dropped))
    if at_a_known_step:
        return Verdict(
            "tools", "unknown",
            f"the scenario's model calls {sorted(at_a_known_step)} in a request whose tools "
            "are a list the agent offered in an earlier request too: the agent offers other "
            "tools at other steps (a hand-off to another agent, a sub-agent, a restart that "
            "begins again at its first agent), and the script does not follow it there, so "
            "the case proves nothing of what came after",
            tuple(_offer_lines(at_a_known_step)),
            advice="script the step that leads to the tool (the hand-off call) in a "
                   "'when:' branch, as a real model would call it")
    return Verdict("tools", "unknown",
                   f"the scenario's model calls {sorted(missing)}, tools this agent does not "
                   f"offer in any request (it offers {sorted(offered_anywhere)}): the scenario "
                   "is not written for this agent, so its case proves nothing",
                   tuple(_offer_lines(missing)),
                   advice="leave the scenario out of the run, or name its tools (and their "
                          "arguments) after the agent's, each with a target: naming the "
                          "agent's function")


def _offer_lines(missing: dict[str, tuple[str, ...]]) -> list[str]:
    return [f"the model called {name!r}; the agent offers {list(offered)}"
            for name, offered in missing.items()]


def check_network(trace: Trace) -> Verdict | None:
    """A case has no network: a call to a host that is no fake provider fails the case.

    Each recorded line ends with the library that made the call, and its off
    switch where the harness knows one (:mod:`harness.intercept._telemetry`);
    the message names them, so the fix is in the advice.
    """
    foreign = trace.extra.foreign_requests or ()
    if not foreign:
        return None
    in_tools: dict[str, int] = trace.extra.foreign_in_tools or {}
    if in_tools:
        return _fail("network", _untargeted_tools_message(len(foreign), in_tools), foreign)
    callers = dict.fromkeys(_caller(line) for line in foreign)
    named = ", ".join(library for library, _ in callers)
    switches = [f"{library}: {switch}" for library, switch in callers if switch]
    advice = (f"turn off what they send by themselves ({'; '.join(switches)}); otherwise "
              if switches else "")
    return _fail("network", f"the agent's process made {len(foreign)} outside call(s) that no "
                 f"fake provider serves (refused: a case has no network), from {named}: "
                 f"{advice}point its model clients at the base URL in the environment "
                 "(OPENAI_BASE_URL, ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL) instead of a "
                 "fixed one; if one of its own tools calls a service, give that tool a target: "
                 "naming the function, so the harness counts the call instead; a tracing or "
                 "usage endpoint the harness does not know can be answered with "
                 "'harness run --absorb HOST'", foreign)


def _untargeted_tools_message(total: int, in_tools: dict[str, int]) -> str:
    """The ``network`` failure when the outside calls came from the agent's own tool
    functions: the fix is a target, which the base URL advice would not give."""
    made = sum(in_tools.values())
    tools = ", ".join(f"`{tool}`" for tool in in_tools)
    message = (f"the agent's process made {total} outside call(s) that no fake provider "
               f"serves (refused: a case has no network), {made} of them while its own "
               f"function for the tool {tools} ran (the tool has no target:, so the harness "
               "did not run it): ")
    message += "; ".join(f"give the tool `{tool}` a `target:` (module:function), or pass "
                         f"`--target {tool}=MODULE:FUNCTION` for a scenario you do not edit, so "
                         "the harness can count its side effects" for tool in in_tools)
    if made < total:
        message += ("; the others: point the model clients at the base URL in the "
                    "environment, or answer a tracing endpoint with 'harness run --absorb HOST'")
    return message


_CALLER = re.compile(r" \(by ([^;)]+)(?:; off switch: (.+))?\)$")


def _caller(line: str) -> tuple[str, str | None]:
    """The library (and its off switch, if known) a recorded outside call names."""
    found = _CALLER.search(line)
    return (found.group(1), found.group(2)) if found else ("the agent", None)


def check_dialect_spoken(trace: Trace) -> Verdict | None:
    """The agent speaks the scenario's dialect: a request in another one fails the case.

    Such a request is answered 404 and the run meets none of the scenario's faults or
    crash points, so without this verdict the case would only be ``unknown``.
    """
    misdialed = trace.extra.misdialed_requests or ()
    if not misdialed:
        return None
    return _fail("dialect", f"this scenario speaks {trace.dialect}; the agent sent "
                 f"{len(misdialed)} request(s) in another dialect: declare the dialects the "
                 "agent speaks (--dialect, or a dialects attribute on main) to skip such "
                 "scenarios", misdialed)


def check_trace(trace: Trace) -> tuple[Verdict, ...]:
    """The verdicts of the scenario's invariants, the side-effect expectation, then the
    checks every case gets (:mod:`._always`).

    A scenario with a goal also gets the goal checks (:mod:`._goals`: I5 and
    ``I5:proof``) whether or not it lists I5.
    """
    verdicts = [
        CHECKS[i](trace) if i in CHECKS else _unknown(i, f"{i} has no checker yet")
        for i in trace.expect.invariants
    ]
    verdicts += goal_verdicts(trace)
    extra = [check_side_effects(trace), check_tool_names(trace), check_network(trace),
             check_dialect_spoken(trace)]
    return tuple(verdicts + [v for v in extra if v is not None] + list(always_verdicts(trace)))
