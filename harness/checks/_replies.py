"""L2: results are committed in the model's order, each to the call that produced it.

Seed 002 §19.5: "结果仍按模型给出的顺序提交" — calls that run side by side finish in
any order, and a runner that pairs results with calls by completion order gives
each call another call's result, with a well-formed transcript. The world knows
what each invocation returned; a reply whose JSON is exactly what a different
call of the same batch returned, and not its own call's result, was crossed. Agents
often wrap a result (``{"status": "ok", "result": …}``): the wrapped value counts as
the reply's too (:data:`WRAPPER_KEYS`).

Example::

    check_replies_match(trace)  # fail: "the reply to put_slow#call_t1_0 is the result of call_t1_1"
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from harness.checks._verdict import Verdict
from harness.trace import MessageRecord, Trace


def check_replies_match(trace: Trace) -> Verdict:
    """Fail when a tool reply carries the result of another call; ``unknown`` without overlap."""
    if trace.outcome is None:
        return Verdict("L2:results", "unknown", "the run produced no outcome")
    results = _results_by_call(trace)
    overlapped = _overlapping_calls(trace)
    if not overlapped:
        return Verdict("L2:results", "unknown", "no two calls with results ran side by side")
    crossed = [line for m in trace.outcome.transcript if m.role == "tool"
               for line in _crossed(m, results)]
    if crossed:
        return Verdict("L2:results", "fail", crossed[0], tuple(crossed),
                       advice="pair each result with its call id, then commit the replies in "
                              "the model's order")
    return Verdict("L2:results", "pass", f"{len(overlapped)} call(s) ran side by side; each "
                   "reply carries its own call's result")


def _results_by_call(trace: Trace) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for inv in trace.invocations:
        if inv.outcome == "ok" and inv.result is not None:
            found[inv.call_id] = json.loads(inv.result)
    return found


def _overlapping_calls(trace: Trace) -> set[str]:
    ran = [i for i in trace.invocations if i.outcome == "ok" and i.ended_at is not None]
    return {a.call_id for a in ran for b in ran if a.seq != b.seq
            and a.started_at < b.ended_at and b.started_at < a.ended_at}  # type: ignore[operator]


#: Keys under which agents commonly wrap a tool's result in their reply
#: (``{"status": "ok", "result": …}``, ``{"output": …}``): the result is looked for there too.
WRAPPER_KEYS = ("result", "output", "content", "data", "value", "response")


def _crossed(reply: MessageRecord, results: dict[str, Any]) -> list[str]:
    own = results.get(reply.call_id or "")
    try:
        said = json.loads(reply.text)
    except ValueError:
        return []
    carried = carried_values(said)
    if own is None or own in carried:
        return []
    others = [cid for cid, value in results.items() if cid != reply.call_id and value in carried]
    return [f"the reply to call {reply.call_id} is the result of call {others[0]}"] if others \
        else []


def carried_values(said: Any) -> list[Any]:
    """The reply itself, and what it holds under a wrapper key (parsed, if a JSON string).

    >>> carried_values({"status": "ok", "result": '{"stored": true}'})[2:]
    [{'stored': True}]
    """
    found = [said]
    if isinstance(said, dict):
        for key in WRAPPER_KEYS:
            if key in said:
                inner = said[key]
                found.append(inner)
                if isinstance(inner, str):
                    with contextlib.suppress(ValueError):
                        found.append(json.loads(inner))
    return found
