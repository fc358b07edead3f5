"""S6:limit: an answer cut at its output limit is asked for again with a raised limit
while the model allows more (seed 002 §19.1 ①, truncation level 1).

"第 1 级:完整 attempt 尚未提交且没有副作用 → 丢弃并提高上限重采样"; grok-build: "重采样同样的
max_tokens 只会再截断". Judged from what the provider saw, for a scenario that declares
the model's ``provider.max_output_tokens`` (the ceiling an agent is told):

- the request an incarnation sends next after an answer cut at a limit below the
  ceiling asks for a higher limit: continuing the cut text (level 2) or answering its
  cut calls with an error (level 3) comes only once the limit cannot be raised;
- no request asks for more than the ceiling.

``unknown`` when no answer was cut below the ceiling and followed in its incarnation, or
for a plain ``main(prompt)``, which is never told the ceiling.

Example::

    check_output_limit(trace)  # fail: "request #2 followed the answer cut at 1024 ..."
"""

from __future__ import annotations

from harness.checks._requests import live_requests, next_in_incarnation
from harness.checks._verdict import Verdict
from harness.ports import LOOPING_FAULTS
from harness.trace import RequestRecord, Trace

_ID = "S6:limit"
_ADVICE = ("an answer cut at your own output limit, before anything of it ran, is dropped "
           "and asked for again with a higher limit (up to the model's); continue cut text "
           "or reject cut calls only when the limit cannot go higher")


def check_output_limit(trace: Trace) -> Verdict | None:
    """S6:limit; ``None`` when the scenario declares no output ceiling."""
    ceiling, asked = trace.extra.output_ceiling, trace.extra.asked_outputs
    if ceiling is None or asked is None:
        return None
    if trace.extra.plain:
        return Verdict(_ID, "unknown", "a plain main(prompt) agent is not told the model's "
                       "output ceiling")
    limits = {a.request: a.limit for a in asked}
    live = live_requests(trace)
    problems = [f"request #{r.index} asked for {limits[r.index]} output tokens, above the "
                f"model's {ceiling}" for r in live if (limits.get(r.index) or 0) > ceiling]
    judged = 0
    for cut in (r for r in live if _cut_below(r, limits, ceiling)):
        after = next_in_incarnation(live, cut)
        if after is None:
            continue
        judged += 1
        before, now = limits[cut.index] or 0, limits.get(after.index) or 0
        if now <= before:
            problems.append(f"request #{after.index} followed the answer cut at {before} output "
                            f"tokens (request #{cut.index}) with a limit of {now or 'none'}, "
                            f"though the model allows {ceiling}")
    if problems:
        return Verdict(_ID, "fail", problems[0], tuple(problems), advice=_ADVICE)
    if not judged:
        return Verdict(_ID, "unknown", f"no answer cut below the model's {ceiling} output "
                       "tokens was followed by another request in its incarnation")
    return Verdict(_ID, "pass", f"each of {judged} answer(s) cut below the model's {ceiling} "
                   "output tokens was asked for again with a raised limit")


def _cut_below(r: RequestRecord, limits: dict[int, int | None], ceiling: int) -> bool:
    """An answer the agent saw whole, cut at a limit the model could have raised (a looping
    answer is the model's wall, judged by retry:doom-loop)."""
    limit = limits.get(r.index)
    return (r.finish == "length" and r.complete and limit is not None and limit < ceiling
            and not LOOPING_FAULTS.intersection(r.faults))
