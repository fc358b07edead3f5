"""refusal: no tool call from a withheld answer runs.

Seed 002 §19.1 ②: "确认没有拒绝、截断或流错误,再把 assistant 消息(文本 + 工具调用)作为最终返回"
— a whole attempt is committed only once it is known that the provider did not refuse
it. An answer that finishes ``refusal`` (Anthropic) or ``content_filter`` (OpenAI, the
Responses API's ``incomplete`` reason, Gemini's ``SAFETY``) can still carry tool calls;
an agent that reads only "the stream ended, here are calls" runs them. The world knows
which answer each call id came from, so this is judged from the trace alone.

Example::

    check_withheld_calls(trace)  # fail: "invocation #1 send_mail ran call call_t1_0 ..."
"""

from __future__ import annotations

from harness.checks._verdict import Verdict
from harness.ports import WITHHELD_FINISHES
from harness.trace import RequestRecord, Trace


def check_withheld_calls(trace: Trace) -> Verdict | None:
    """Fail when a call of a withheld answer ran; None when no answer was withheld with calls.

    ``unknown`` when such an answer was scripted but never reached the agent whole.
    """
    scripted = [r for r in trace.requests if r.finish in WITHHELD_FINISHES and r.calls]
    if not scripted:
        return None
    delivered = [r for r in scripted if r.complete]
    if not delivered:
        return Verdict("refusal", "unknown", "no withheld answer with tool calls reached the "
                       "agent whole")
    withheld = {call.call_id: r for r in delivered for call in r.calls}
    # A call id a later, ordinary answer sent again may run: that answer was not withheld.
    allowed = {call.call_id for r in trace.requests if r.committable
               and r.finish not in WITHHELD_FINISHES for call in r.calls}
    ran = [f"invocation #{inv.seq} {inv.tool} ran call {inv.call_id} of "
           f"{_request_line(withheld[inv.call_id])}"
           for inv in trace.invocations
           if not inv.refused and inv.call_id in withheld and inv.call_id not in allowed]
    if ran:
        return Verdict("refusal", "fail", "a tool ran a call from an answer the provider "
                       "withheld", tuple(ran),
                       advice="read the finish before running any call: an answer that ends "
                              "refusal or content_filter is no answer; run none of its calls")
    return Verdict("refusal", "pass", f"{len(delivered)} withheld answer(s) with tool calls; "
                   "none of their calls ran")


def _request_line(request: RequestRecord) -> str:
    return (f"turn {request.turn} attempt {request.attempt} (incarnation "
            f"{request.incarnation}), finish {request.finish}")
