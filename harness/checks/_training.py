"""train:no-patch: a session collected as training data never sends a placeholder reply.

Seed 002 §19.1 ①: "产品模式可以用占位符修补损坏的消息结构,训练数据收集模式则拒绝修补(产品宽容、
训练严格)", and truncation level 4, "恢复预算用尽或工具结果未知 → 停止并把原因暴露给用户". A
product agent may answer a cut call with an error or a call a crash left unsettled with
"outcome unknown, inspect first" (J5); collected as training data, that made-up reply
becomes a sample the model learns from. So, for a scenario that declares
``training_data: true`` (the agent is told as ``Task.training_data``):

- a call the world saw put in doubt — one of an answer cut at the output limit, or
  one of an answer whose incarnation crashed before any of its requests carried the
  call's reply — is answered, in any later request, only by a result a tool run of
  that call returned before the request (matched inside the usual wrappers,
  ``{"status": "ok", "result": …}``), or not answered at all: the run stops instead,
  which I4 judges against the scenario's stop state.

Other replies without a tool run (an argument error, a guard's reminder) answer a whole
call, not a broken structure, and are not judged. ``unknown`` when no call was put in
doubt, or for a plain ``main(prompt)``, which is never told the session's use.

Example::

    check_no_patch(trace)  # fail: "request #4 answered call_t2_0 (outbox), cut at the ..."
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Final

from harness.checks._replies import carried_values
from harness.checks._requests import live_requests
from harness.checks._verdict import Verdict
from harness.trace import InvocationRecord, RequestRecord, SentReply, Trace

_ID: Final = "train:no-patch"
_ADVICE: Final = ("collecting training data, never answer a cut call or a call whose "
                  "result a crash lost with a made-up reply: resample a cut answer while "
                  "the budget allows, run a call that never started again, and otherwise "
                  "stop with the reason for a person to settle (truncation level 4)")
# How a tool run ends with something to tell the model: its result, its error, its timeout.
_SETTLED: Final = frozenset({"ok", "error", "cancelled"})


def check_no_patch(trace: Trace) -> Verdict | None:
    """train:no-patch; ``None`` unless the scenario's session is collected as training data."""
    if not trace.extra.training_data:
        return None
    if trace.extra.plain:
        return Verdict(_ID, "unknown", "a plain main(prompt) agent is not told that its "
                       "session is collected as training data")
    live = live_requests(trace)
    doubted = _doubted_calls(trace, live)
    if not doubted:
        return Verdict(_ID, "unknown", "no call was cut at the output limit or left without "
                       "its result by a crash: nothing tempted a placeholder reply")
    runs = _runs_by_call(trace.invocations)
    problems: list[str] = []
    answered = 0
    for call_id, why in doubted.items():
        sent = _replies_to(call_id, live)
        answered += bool(sent)
        problems += [f"request #{r.index} answered call {call_id} ({why}) with a reply no "
                     f"tool run returned: {_short(reply.text)}"
                     for r, reply in sent if not _returned(reply, r, runs.get(call_id, ()))][:1]
    if problems:
        return Verdict(_ID, "fail", f"{len(problems)} call(s) put in doubt were patched with "
                       f"a placeholder reply: {problems[0]}", tuple(problems), advice=_ADVICE)
    return Verdict(_ID, "pass", f"{len(doubted)} call(s) cut or left without a result by a "
                   f"crash: {answered} answered with what a tool run returned, "
                   f"{len(doubted) - answered} never answered (the run stopped "
                   f"{_stop(trace)})")


def left_unanswered(trace: Trace) -> list[str]:
    """The calls put in doubt that no request ever answered, for a session collected as
    training data: what a run that stopped rather than patch them left (I2, I4 take it)."""
    if not trace.extra.training_data:
        return []
    live = live_requests(trace)
    return [f"call {call_id} ({why})" for call_id, why in _doubted_calls(trace, live).items()
            if not _replies_to(call_id, live)]


def _doubted_calls(trace: Trace, live: list[RequestRecord]) -> dict[str, str]:
    """Each call a placeholder could stand in for, by id, with why, oldest first."""
    crashed = {i.number for i in trace.incarnations if i.crashed_at is not None}
    doubted: dict[str, str] = {}
    for request in live:
        for call in request.calls:
            if not request.committable:
                doubted.setdefault(call.call_id, f"{call.name}, cut in the answer to request "
                                   f"#{request.index}")
            elif request.incarnation in crashed and not _answered_before_crash(
                    call.call_id, request, live):
                doubted.setdefault(call.call_id, f"{call.name}, whose incarnation "
                                   f"{request.incarnation} crashed before it sent the reply")
    return doubted


def _answered_before_crash(call_id: str, sent_by: RequestRecord,
                           live: list[RequestRecord]) -> bool:
    """Whether the incarnation that received the call sent its reply before it died."""
    return any(r.incarnation == sent_by.incarnation and r.index > sent_by.index
               and any(reply.call_id == call_id for reply in r.replies) for r in live)


def _replies_to(call_id: str, live: Iterable[RequestRecord]
                ) -> list[tuple[RequestRecord, SentReply]]:
    return [(r, reply) for r in live for reply in r.replies if reply.call_id == call_id]


def _runs_by_call(invocations: Iterable[InvocationRecord]
                  ) -> dict[str, list[InvocationRecord]]:
    runs: dict[str, list[InvocationRecord]] = {}
    for inv in invocations:
        if not inv.refused and inv.outcome in _SETTLED and inv.ended_at is not None:
            runs.setdefault(inv.call_id, []).append(inv)
    return runs


def _returned(reply: SentReply, request: RequestRecord,
              runs: Iterable[InvocationRecord]) -> bool:
    """Whether ``reply`` tells what a run of its call returned before ``request`` was sent:
    an error or a timeout in the agent's own words, a result as the tool gave it."""
    ended = [i for i in runs if i.ended_at is not None and i.ended_at <= request.started_at]
    if any(i.outcome != "ok" or i.result is None for i in ended):
        return True
    return any(_carries(reply.text, i.result) for i in ended if i.result is not None)


def _carries(text: str, result: str) -> bool:
    """The result itself or wrapped (``{"result": …}``); in prose, its JSON verbatim."""
    value = json.loads(result)
    try:
        said = json.loads(text)
    except ValueError:
        return result in text or json.dumps(value) in text
    return value in carried_values(said)


def _short(text: str) -> str:
    return text if len(text) <= 120 else text[:117] + "..."


def _stop(trace: Trace) -> str:
    if trace.outcome is None:
        return "without an outcome"
    return f"{trace.outcome.stop_state!r}: {trace.outcome.reason}"
