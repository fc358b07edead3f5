"""retry:doom-loop: a degenerate, repeating answer is resampled, never built on (seed 002 §19.1).

grok-build's retry table: "推理死循环(DoomLoop) 🔄 换法重采样 — 重试无意义,换参数重采样才有意义".
An answer that says one phrase over and over is the model's wall, not the network's:
the same request meets it again, and its text is no answer. Judged from what the
provider saw, for a scenario with a ``doom_loop`` fault:

- no later request carries the looping text back to the model (a continuation of it,
  or the loop kept in the history as the turn's answer), and the run's final answer
  is not the loop;
- the request an incarnation sends next after a looping answer asks for other
  sampling parameters (temperature, top_p, a penalty, a seed) than the looping one did.
  Another incarnation's request is not held to it: a restart may ask afresh.

``unknown`` when no looping answer reached the agent, or none was followed in its
incarnation by another request (the agent stopped instead: not built on, not resampled).

Example::

    check_doom_loop(trace)   # fail: "request #2 carried the looping text of request #1 back"
"""

from __future__ import annotations

from harness.checks._requests import live_requests, next_in_incarnation
from harness.checks._verdict import Verdict
from harness.ports import LOOPING_FAULTS
from harness.trace import RequestRecord, SampledRequest, Trace

_ID = "retry:doom-loop"
_ADVICE = ("drop an answer that keeps repeating itself (stop reading it) and ask again "
           "with other sampling parameters (a higher temperature, a penalty, another seed), "
           "a bounded number of times")


def check_doom_loop(trace: Trace) -> Verdict | None:
    """retry:doom-loop; ``None`` when the scenario has no looping answer."""
    phrases, sampled = trace.extra.loop_phrases, trace.extra.sampled_requests
    if phrases is None or sampled is None:
        return None
    how = {s.request: s for s in sampled}
    live = live_requests(trace)
    looped = [r for r in live if LOOPING_FAULTS.intersection(r.faults) and r.delivered_bytes > 0]
    if not looped:
        return Verdict(_ID, "unknown", "no looping answer reached the agent")
    problems = _carried(live, looped[0], how) + _final_answer(trace, phrases)
    judged = 0
    for loop in looped:
        after = next_in_incarnation(live, loop)
        if after is None:
            continue
        judged += 1
        before, now = _sampling(how, loop), _sampling(how, after)
        if before == now:
            problems.append(f"request #{after.index} followed the looping answer of request "
                            f"#{loop.index} with the same sampling ({_words(now)}): the same "
                            "request meets the same loop")
    if problems:
        return Verdict(_ID, "fail", problems[0], tuple(problems), advice=_ADVICE)
    if not judged:
        return Verdict(_ID, "unknown", "no request followed a looping answer in its "
                       "incarnation (the agent stopped there)")
    return Verdict(_ID, "pass", f"each of {judged} looping answer(s) was followed by a "
                   "request with other sampling, and none was carried back to the model")


def _carried(live: list[RequestRecord], first: RequestRecord,
             how: dict[int, SampledRequest]) -> list[str]:
    return [f"request #{r.index} carried the looping text of request #{first.index} back to "
            "the model" for r in live
            if r.index > first.index and r.index in how and how[r.index].carries_loop]


def _final_answer(trace: Trace, phrases: tuple[str, ...]) -> list[str]:
    answer = trace.extra.final_answer or ""
    if any(f"{p} {p}" in answer for p in phrases):
        return [f"the run's final answer is the loop: {answer[:80]!r}…"]
    return []


def _sampling(how: dict[int, SampledRequest], request: RequestRecord) -> tuple[str, ...]:
    seen = how.get(request.index)
    return seen.sampling if seen is not None else ()


def _words(sampling: tuple[str, ...]) -> str:
    return ", ".join(sampling) if sampling else "the provider's defaults"
