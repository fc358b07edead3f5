"""Usage the agent reports, held against what the provider sent (L6; seed 000 §5).

Seed 000 §5: "用量统计分开记录累计账单 token 和最后一次请求的上下文 token" — billed
tokens add up every attempt, context tokens are the input of the last request
alone; the first is for cost, the second for how much room the context has
left. An agent that reports the running total as its context (or the reverse)
misjudges when to compact.

Example::

    check_context_tokens(trace)
    # fail: "context_tokens 4180 is not the last request's input (912)"
"""

from __future__ import annotations

from harness.checks._verdict import Verdict
from harness.trace import Trace


def check_context_tokens(trace: Trace) -> Verdict:
    """``context_tokens`` equals the input tokens of the last request whose usage arrived.

    A later attempt that broke after some bytes may have carried usage too
    (Anthropic sends the input count first), so its input is accepted as well.
    ``unknown`` when the agent reports no context size or no usage reached it.
    """
    outcome = trace.outcome
    if outcome is None or outcome.context_tokens is None:
        return Verdict("L6", "unknown", "the agent reported no context_tokens")
    reported = [r for r in trace.requests if r.usage_reported]
    if not reported:
        return Verdict("L6", "unknown", "no request's usage reached the agent")
    last = reported[-1]
    assert last.usage is not None
    allowed = {last.usage.input_tokens} | {
        r.usage.input_tokens for r in trace.requests
        if r.index > last.index and r.usage is not None and r.delivered_bytes > 0}
    if outcome.context_tokens in allowed:
        return Verdict("L6", "pass", f"context_tokens {outcome.context_tokens} is the last "
                       "request's input")
    billed = outcome.billed_usage.input_tokens if outcome.billed_usage else None
    return Verdict("L6", "fail", f"context_tokens {outcome.context_tokens} is not the last "
                   f"request's input ({last.usage.input_tokens})",
                   (f"request #{last.index}: input {last.usage.input_tokens}",
                    f"billed input over the run: {billed}"),
                   advice="keep cumulative billed tokens and the last request's input apart")
