"""``breaker``: during a long outage the agent keeps a circuit breaker (seed 002 §19.1).

"熔断器通常有三个状态:Closed 正常放行并统计失败率;达到最小样本数且错误率超过阈值
后进入 Open,直接拒绝;冷却期后进入 HalfOpen,只允许少量探测,成功则关闭,失败则重新
打开". Judged from the requests' virtual times against the scenario's
``expect.breaker``: after ``failures_to_open`` failed requests in a row (a server
error, a reset, or any answer inside a declared outage) nothing is sent for
``cooldown_seconds``; then one probe at a time, and a failed probe opens the breaker
again. An agent that keeps retrying on its backoff straight through the outage lets
every request through.

Only scenarios that declare ``expect.breaker`` are judged: seed 002 §19.1 says a
single-user agent without a breaker is not necessarily wrong ("没有熔断器不一定是缺陷").

Example::

    check_breaker(trace)   # fail: "request #5 went 8s after 3 failures in a row; ..."
"""

from __future__ import annotations

from harness.checks._tolerance import early_tolerance
from harness.checks._verdict import Verdict
from harness.trace import RequestRecord, Trace

_ID = "breaker"
_EPS = 1e-6


def _failed(request: RequestRecord) -> bool:
    return request.condition == "outage" or request.status >= 500 \
        or request.delivery in ("reset", "broken")


def _end(request: RequestRecord) -> float:
    return request.ended_at if request.ended_at is not None else request.started_at


def check_breaker(trace: Trace) -> Verdict | None:
    """After N failures in a row, one request per cooldown, never two at once."""
    if trace.expect.breaker is None:
        return None
    threshold, cooldown = trace.expect.breaker
    live = sorted((r for r in trace.requests if r.delivery != "refused"),
                  key=lambda r: (r.started_at, r.index))
    problems, opened, in_a_row, last_failure = [], 0, 0, None
    for request in live:
        if in_a_row >= threshold and last_failure is not None:
            problems += _while_open(request, last_failure, cooldown, in_a_row,
                                    early_tolerance(trace))
        if _failed(request):
            in_a_row, last_failure = in_a_row + 1, request
            opened += in_a_row == threshold
        else:
            in_a_row, last_failure = 0, None
    if problems:
        return Verdict(_ID, "fail", problems[0], tuple(problems),
                       advice="open a circuit breaker after repeated failures: no request "
                              "for the cooldown, then one leased probe (seed 002 §19.1)")
    if not opened:
        return Verdict(_ID, "unknown", f"no {threshold} requests failed in a row: the "
                       "breaker never had to open")
    return Verdict(_ID, "pass", f"the breaker opened {opened} time(s); every request after "
                   f"{threshold} failures came {cooldown:g}s or more after the last one, alone")


def _while_open(request: RequestRecord, last: RequestRecord, cooldown: float,
                in_a_row: int, tolerance: float) -> list[str]:
    gap = request.started_at - _end(last)
    if request.started_at < _end(last) - _EPS:
        return [f"request #{request.index} started at {request.started_at:g}s while the probe "
                f"#{last.index} was still in flight: more than one half-open probe"]
    if gap < cooldown - tolerance - _EPS:
        return [f"request #{request.index} went {gap:g}s after {in_a_row} failures in a row "
                f"(the last #{last.index}); the cooldown is {cooldown:g}s"]
    return []
