"""Timing rules, judged from the world's clock: what the agent did, and when.

Each check reads only the world's record — requests with their virtual start
times, the wait each answer asked for, the silences a client sat through, tool
invocations with their start and end — so it applies to any agent, whatever it
reports. Each is ``unknown`` when the run never met what it is about.

- ``S1`` idle watchdog (seed 002 §19.1 ②, "自建起步" ①): once a stream has sent
  its first chunk, the client never waits on it silent for longer than the
  scenario's ``idle_bound_seconds`` (30 s, the seed's example);
- ``S5`` Retry-After (seed 002 §19.1, "尊重服务端 Retry-After"): after an answer
  that asked for a wait within ``retry_after_cap_seconds``, the same process
  sends nothing before the wait is over;
- ``S5:429`` (seed 002 "自建起步" ⑤, grok limits consecutive 429s): after
  ``max_consecutive_429`` rate limits in a row, no further request;
- ``S5:4xx`` (seed 002 §19.1, grok-build: 400/404/422 are never retried): a request
  answered 400, 404 or 422 is never sent again by the same incarnation;
- ``J7`` settle (seed 002 §19.1, "工具超时为什么不能直接 Promise.race"): while a
  cancelled tool call still runs, no model request and no call of that tool
  starts;
- ``L2`` overlap (seed 002 §19.5): a tool not declared concurrency-safe never
  runs at the same virtual time as another call.

Example::

    check_retry_after(trace)   # fail: "request #3 came 2.1s after a 429 that asked for 60s"
"""

from __future__ import annotations

import math

from harness.checks._tolerance import early_tolerance, late_tolerance, tolerance_note
from harness.checks._verdict import Verdict
from harness.ports import LOOPING_FAULTS, SILENCING_FAULTS
from harness.trace import InvocationRecord, RequestRecord, Trace, request_turn

# Virtual times are sums of float seconds; a wait honoured to the microsecond is honoured.
_EPS = 1e-6


def _live(trace: Trace) -> list[RequestRecord]:
    return [r for r in trace.requests if r.delivery != "refused"]


def _at(trace: Trace, r: RequestRecord) -> str:
    return f"request #{r.index} ({request_turn(trace, r)}, incarnation {r.incarnation})"


# ------------------------------------------------------------------------- S1


def check_idle_watchdog(trace: Trace) -> Verdict:
    """No open stream is waited on silently for longer than the idle bound."""
    bound, tolerance = trace.expect.idle_bound_seconds, late_tolerance(trace)
    streams = [r for r in _live(trace) if r.first_byte_at is not None]
    if tolerance >= bound and streams:
        return Verdict("S1", "unknown", f"the served clock is exact to {tolerance:g}s at "
                       f"this time scale, not below the {bound:g}s idle bound: run at a "
                       "larger --time-scale to judge it")
    long = [r for r in streams if r.longest_silence > bound + tolerance + _EPS]
    if long:
        return Verdict("S1", "fail", f"{_at(trace, long[0])} was waited on silent for "
                       f"{long[0].longest_silence:g}s; an idle watchdog abandons it after "
                       f"{bound:g}s{tolerance_note(tolerance)}",
                       tuple(f"{_at(trace, r)}: silent {r.longest_silence:g}s, ended "
                             f"{r.delivery}" for r in long),
                       advice="abort an attempt when no chunk came for the idle bound (a "
                              "watchdog apart from the connect timeout) and retry it")
    stalled = [r for r in streams if SILENCING_FAULTS.intersection(r.faults)]
    if not stalled:
        return Verdict("S1", "unknown", "no stream stalled after its first chunk")
    return Verdict("S1", "pass", f"{len(stalled)} stalled stream(s), each abandoned within "
                   f"{bound:g}s of silence")


# ------------------------------------------------------------------------- S5


def check_retry_after(trace: Trace) -> Verdict:
    """No request before the wait an answer asked for (within the cap) was over."""
    cap, tolerance = trace.expect.retry_after_cap_seconds, early_tolerance(trace)
    live = _live(trace)
    # Served, a wait no longer than the clock's margin cannot be told from no wait.
    asked = [r for r in live if r.retry_after is not None and r.retry_after <= cap
             and (not tolerance or r.retry_after > tolerance)]
    early = [line for r in asked for line in _too_soon(trace, r, live, tolerance)]
    if early:
        return Verdict("S5", "fail", early[0], tuple(early),
                       advice="read retry-after-ms / Retry-After and wait that long before "
                              "the retry when it is under your cap")
    if not asked:
        within = f", longer than {tolerance:g}s (the served clock's margin)" if tolerance else ""
        return Verdict("S5", "unknown", f"no answer asked for a wait of at most {cap:g}s"
                       + within)
    return Verdict("S5", "pass", f"{len(asked)} asked wait(s) honoured")


def _too_soon(trace: Trace, r: RequestRecord, live: list[RequestRecord], tolerance: float
              ) -> list[str]:
    assert r.retry_after is not None
    answered = r.first_byte_at if r.first_byte_at is not None else r.started_at
    ready = answered + r.retry_after - tolerance
    after = [n for n in live if n.index > r.index and n.incarnation == r.incarnation]
    return [f"{_at(trace, n)} came {n.started_at - answered:g}s after {_at(trace, r)} "
            f"answered {r.status} asking to wait {r.retry_after:g}s"
            for n in after[:1] if n.started_at + _EPS < ready]


def check_backoff(trace: Trace) -> Verdict:
    """A retry after a failure that asked for no wait comes after a backoff that grows.

    Seed 002 §19.1 (grok-build): "普通退避大致为 2、4、8、16 秒 … 并加入随机抖动"; codex:
    "指数退避 … 退避带少量随机抖动". What the rule asks is exponential backoff with jitter,
    not a fixed first wait: the k-th retry in a row waits at least :func:`backoff_needed`
    (``min_backoff_seconds`` is where the doubling starts, before its jitter). The official
    SDKs' own policy (0.5 s, doubling, less up to a quarter of jitter) meets it; an instant
    retry, or a short one repeated without growing, does not. Hammering a failing provider
    is advice, not a broken rule: ``warn``. A request naming another model than the failed
    one (a backup) retries no failed route and owes no backoff (retry:backup judges it).
    """
    floor = trace.expect.min_backoff_seconds
    live = _live(trace)
    in_a_row = _failures_in_a_row(live)
    failed = [r for r in live if r.retry_after is None and _failed(r)]
    early = early_tolerance(trace)
    quick = [line for r in failed
             for line in _retried_within(trace, r, live,
                                         backoff_needed(floor, in_a_row[r.index]), early)]
    if quick:
        return Verdict("S5:backoff", "warn", quick[0], tuple(quick),
                       advice="back off exponentially with jitter between retries "
                              f"(at least {floor:g}s, doubling), not at once")
    retried = [r for r in failed if any(n.index > r.index and n.incarnation == r.incarnation
                                        for n in live)]
    if not retried:
        return Verdict("S5:backoff", "unknown", "no failure without an asked wait was retried")
    return Verdict("S5:backoff", "pass", f"{len(retried)} retry(ies), each after a backoff "
                   f"growing from {floor:g}s")


#: The share of the doubling schedule a retry's wait must reach: the official SDKs start
#: at half of the 1 s default (0.5 s) and jitter takes off up to a quarter of each wait.
_JITTERED_SHARE = 0.5 * 0.75
#: The doubling is capped (the SDKs at 8 s, grok-build at about 30 s): no retry is asked
#: to wait more than this many times ``min_backoff_seconds``.
_CAP_TIMES_FLOOR = 4


def backoff_needed(floor: float, in_a_row: int) -> float:
    """The least wait before the retry of the ``in_a_row``-th failure in a row.

    >>> [backoff_needed(1.0, k) for k in (1, 2, 3, 4, 5)]
    [0.375, 0.75, 1.5, 3.0, 4.0]
    """
    doubled: float = floor * _JITTERED_SHARE * 2.0 ** (in_a_row - 1)
    return min(doubled, floor * _CAP_TIMES_FLOOR)


def _failures_in_a_row(live: list[RequestRecord]) -> dict[int, int]:
    """For each request, how many failures in a row its incarnation had, it included."""
    streaks: dict[int, int] = {}
    counted: dict[int, int] = {}
    for r in live:
        streak = streaks.get(r.incarnation, 0) + 1 if _failed(r) else 0
        streaks[r.incarnation] = counted[r.index] = streak
    return counted


def _failed(r: RequestRecord) -> bool:
    if LOOPING_FAULTS.intersection(r.faults):
        return False  # the model's loop, dropped by the client: resampled, not backed off
    transient = r.status in (408, 409, 429) or r.status >= 500
    return (r.delivery == "http_error" and transient) or r.delivery in ("partial", "broken")


def _retried_within(trace: Trace, r: RequestRecord, live: list[RequestRecord],
                    needed: float, early: float) -> list[str]:
    failed_at = r.ended_at if r.ended_at is not None else r.started_at
    after = [n for n in live if n.index > r.index and n.incarnation == r.incarnation]
    # A request to another model (a backup, seed 002 §19.2: 切备用线路) does not retry the
    # route that failed: it need not wait for that route to recover (retry:backup judges it).
    after = [n for n in after[:1] if n.model is None or r.model is None or n.model == r.model]
    return [f"{_at(trace, n)} retried {n.started_at - failed_at:g}s after {_at(trace, r)} "
            f"failed ({r.delivery} {r.status}); expected a backoff of at least {needed:g}s"
            for n in after[:1] if n.started_at + _EPS < failed_at + needed - early]


def check_429_cap(trace: Trace) -> Verdict:
    """After the declared number of 429s in a row, the agent stops asking.

    The run of 429s is counted across restarts: a crash between two rate limits buys no
    fresh run of them. But a 429 answered to the last request of an incarnation that then
    died may have reached the agent only as its process went down, before it could write
    it down: that one neither counts nor breaks the run (as S8 counts a request a crash may
    have kept from being recorded).
    """
    cap = trace.expect.max_consecutive_429
    streak, reached = 0, False
    live = _live(trace)
    unheard = _last_of_each_dead_incarnation(live)
    for r in live:
        if streak >= cap:
            return Verdict("S5:429", "fail", f"{_at(trace, r)} was sent after {streak} rate "
                           f"limits (429) in a row; the cap is {cap}, then the run ends "
                           "usage_limited",
                           advice="count consecutive 429s, across a restart too (write each "
                                  "down before its wait), and stop as usage_limited at the "
                                  "cap")
        if r.status == 429 and r.index in unheard:
            continue
        streak = streak + 1 if r.status == 429 else 0
        reached = reached or streak >= cap
    if not reached:
        return Verdict("S5:429", "unknown", f"no {cap} rate limits (429) came in a row")
    return Verdict("S5:429", "pass", f"the agent stopped after {cap} rate limits in a row")


def _last_of_each_dead_incarnation(live: list[RequestRecord]) -> frozenset[int]:
    """The index of each incarnation's last request, but the final incarnation's."""
    last: dict[int, int] = {}
    for r in live:
        last[r.incarnation] = r.index
    final = max(last, default=0)
    return frozenset(index for incarnation, index in last.items() if incarnation != final)


# ------------------------------------------------------------------------- S5:4xx

#: Client errors no retry can fix: the same request gets the same answer (seed 002 §19.1:
#: only 429, some 5xx and broken streams are retried). 408 and 409 are retried by the SDKs.
FINAL_CLIENT_ERRORS = (400, 404, 422)


def check_client_errors(trace: Trace) -> Verdict | None:
    """A request answered 400, 404 or 422 is not sent again by the same incarnation.

    ``None`` when no such answer came. A context-length error (a standing condition of the
    world, answered 400) is the compaction checks' to judge: a smaller request follows it.
    """
    live = _live(trace)
    refused = [r for r in live if r.status in FINAL_CLIENT_ERRORS and r.condition is None]
    if not refused:
        return None
    retried = []
    for r in refused:
        again = next((x for x in live if x.index > r.index and x.incarnation == r.incarnation
                      and x.turn == r.turn), None)
        if again is not None:
            retried.append(f"{_at(trace, again)} retried {_at(trace, r)}, which was answered "
                           f"{r.status}")
    if retried:
        return Verdict("S5:4xx", "fail", retried[0], tuple(retried),
                       advice="a 400, 404 or 422 is not retryable: the same request gets the "
                              "same answer; stop the run failed (or fix the request)")
    statuses = sorted({r.status for r in refused})
    return Verdict("S5:4xx", "pass", f"{len(refused)} request(s) answered {statuses}, none "
                   "sent again")


# ------------------------------------------------------------------------- J7


def _end(inv: InvocationRecord) -> float:
    return math.inf if inv.ended_at is None else inv.ended_at


def check_settle(trace: Trace) -> Verdict:
    """While a cancelled tool call still runs, no request and no call of that tool starts."""
    ran = [i for i in trace.invocations if not i.refused]
    cut = [i for i in ran if i.outcome in ("cancelled", "running", "abandoned")]
    if not cut:
        return Verdict("J7", "unknown", "no tool call was cancelled")
    found = [line for inv in cut for line in _while_running(inv, trace, ran)]
    if found:
        return Verdict("J7", "fail", found[0], tuple(found),
                       advice="after cancelling a timed-out tool, await it (or kill its process "
                              "group) before the next request or call of that tool")
    return Verdict("J7", "pass", f"{len(cut)} cancelled call(s), each settled before the "
                   "next request or call of its tool")


def _while_running(inv: InvocationRecord, trace: Trace,
                   ran: list[InvocationRecord]) -> list[str]:
    start, end = inv.started_at, _end(inv)
    settled = "never settled" if inv.ended_at is None else f"settled at {end:g}s"
    what = f"the cancelled call {inv.call_id} of {inv.tool} ({settled})"
    requests = [f"{_at(trace, r)} started at {r.started_at:g}s while {what} still ran"
                for r in _live(trace) if start < r.started_at < end - _EPS]
    calls = [f"call {o.call_id} of {o.tool} started at {o.started_at:g}s while {what} still ran"
             for o in ran if o.tool == inv.tool and o.seq != inv.seq
             and start < o.started_at < end - _EPS]
    return requests + calls


# ------------------------------------------------------------------------- L2


def check_overlap(trace: Trace) -> Verdict:
    """A tool not declared concurrency-safe never runs beside another call."""
    unsafe = set(trace.expect.unsafe_tools)
    ran = [i for i in trace.invocations if not i.refused]
    timed = [i for i in ran if i.tool in unsafe and _end(i) > i.started_at]
    if not timed:
        return Verdict("L2", "unknown", "no tool that must run alone took any time")
    pairs = [f"{a.tool} call {a.call_id} ran {a.started_at:g}-{_end(a):g}s beside {b.tool} "
             f"call {b.call_id} {b.started_at:g}-{_end(b):g}s"
             for a in timed for b in ran
             if b.seq != a.seq and a.started_at < _end(b) and b.started_at < _end(a)]
    if pairs:
        return Verdict("L2", "fail", f"a tool that is not concurrency-safe ran beside another "
                       f"call: {pairs[0]}", tuple(pairs),
                       advice="run a batch sequentially when any of its tools is not "
                              "concurrency-safe")
    return Verdict("L2", "pass", f"{len(timed)} call(s) of tools that must run alone, "
                   "none beside another")
