"""The goal budget, judged from the world's record (seed 002 §19.2, "子预算只能消费父预算").

- ``budget:spend``: once the tokens (or dollars, at the model's list price) the
  provider billed reach the scenario's ``budget.max_tokens`` (``max_cost_usd``),
  no further request starts: a turn or a retry layer that keeps going spends past
  its parent. ``unknown`` when the run never reached the budget, or the agent is a
  plain ``main(prompt)`` that is never told it;
- ``budget:tools``: no tool call runs past the run's deadline (``budget.deadline_seconds``
  from the run's start): a tool's own timeout is cut to the time the run has left.
  No verdict when no tool call was running as the deadline came;
- ``budget:tool-calls``: no more tool calls run, over the whole run, than the scenario's
  ``budget.max_tool_calls`` (ToolBudget(maxCalls)); ``unknown`` when the model never
  asked for more;
- ``budget:job-runtime``: no background job runs past the scenario's ``budget.max_job_seconds``
  (BackgroundBudget(maxRuntime)) counted from its process's start as the job runner saw it:
  it is signalled by then and gone within the TERM→KILL follow-through after, across
  restarts (a restart grants no time anew). ``unknown`` when no job outran the budget;
- ``budget:job-starts``: no more background jobs start, over the whole run, than the
  scenario's ``budget.max_jobs`` (BackgroundBudget(maxJobs)), counted in the job runner's
  record over every incarnation. ``unknown`` when the model never asked for more;
- ``budget:job-output``: no background job goes on writing past the scenario's
  ``budget.max_job_output_lines`` (BackgroundBudget(maxOutput)), counted from its first
  line in the job runner's record: a job that wrote past it was signalled no later than the
  first read (of any incarnation) that showed it so, and gone within the TERM→KILL
  follow-through after. ``unknown`` when no job wrote past the budget.

Example::

    check_spend(trace)         # fail: "request #4 started after 1,210 tokens were billed"
    check_tool_deadline(trace) # fail: "hang#call_t1_0 ran until 300s; the deadline was 120s"
    check_tool_calls(trace)    # fail: "4 tool calls ran; the cap is 3: call call_t4_0 ran ..."
    check_job_runtime(trace)   # fail: "build job exec-1 (started at 2s) was first signalled ..."
    check_job_starts(trace)    # fail: "3 background jobs started; the cap is 2: lint job ..."
    check_job_output(trace)    # fail: "test job exec-1 wrote 60 lines and was never signalled ..."
"""

from __future__ import annotations

from decimal import Decimal

from harness.checks._jobs import TERM_FOLLOW_THROUGH_SECONDS
from harness.checks._tolerance import late_tolerance, tolerance_note
from harness.checks._verdict import Verdict
from harness.ports import NEIGHBOUR_SESSION, UsageBuckets, has_price
from harness.ports import cost as cost_of
from harness.trace import JobRecord, RequestRecord, SignalRecord, Trace

_EPS = 1e-6
# A plain main(prompt) is handed a prompt only: a budget it was never told is not its bug.
UNTOLD_BUDGET = "a plain main(prompt) agent is not told the run's budget or deadline"


def _billed(request: RequestRecord) -> tuple[int, Decimal]:
    usage = request.usage if request.usage_reported else None
    if usage is None:
        return 0, Decimal(0)
    tokens = usage.input_tokens + usage.output_tokens
    model = request.model or ""
    if not has_price(model):
        return tokens, Decimal(0)
    buckets = UsageBuckets(uncached_input=usage.input_tokens - usage.cache_read_tokens,
                                 cache_read=usage.cache_read_tokens, output=usage.output_tokens)
    return tokens, cost_of(model, buckets)


def check_spend(trace: Trace) -> Verdict | None:
    """No request starts after the token or cost budget was spent."""
    max_tokens, max_cost = trace.expect.max_tokens, trace.expect.max_cost_usd
    if max_tokens is None and max_cost is None:
        return None
    if trace.extra.plain:
        return Verdict("budget:spend", "unknown", UNTOLD_BUDGET)
    live = sorted((r for r in trace.requests if r.delivery != "refused"),
                  key=lambda r: r.started_at)
    late, reached = [], False
    for request in live:
        tokens, cost = _spent_before([r for r in live if r.index < request.index],
                                     request.started_at)
        over = (max_tokens is not None and tokens >= max_tokens) or (
            max_cost is not None and cost >= Decimal(str(max_cost)))
        reached = reached or over
        if over:
            late.append(f"request #{request.index} started at {request.started_at:g}s after "
                        f"{tokens:,} tokens (${cost:.4f}) were billed")
    tokens, cost = _spent_before(live, float("inf"))
    budget = _describe(max_tokens, max_cost)
    if late:
        return Verdict("budget:spend", "fail", f"{late[0]}; the budget is {budget}", tuple(late),
                       advice="every layer spends from the run's budget: stop with "
                              "budget_limited once its tokens or cost are used up")
    if not (reached or (max_tokens is not None and tokens >= max_tokens)
            or (max_cost is not None and cost >= Decimal(str(max_cost)))):
        return Verdict("budget:spend", "unknown", f"the run billed {tokens:,} tokens "
                       f"(${cost:.4f}) and never reached its budget of {budget}")
    return Verdict("budget:spend", "pass", f"no request started after the budget of {budget} "
                   f"was spent ({tokens:,} tokens, ${cost:.4f} billed)")


def _spent_before(requests: list[RequestRecord], at: float) -> tuple[int, Decimal]:
    done = [_billed(r) for r in requests if r.ended_at is not None and r.ended_at <= at + _EPS]
    return sum(t for t, _ in done), sum((c for _, c in done), Decimal(0))


def _describe(max_tokens: int | None, max_cost: float | None) -> str:
    parts = [f"{max_tokens:,} tokens"] if max_tokens is not None else []
    if max_cost is not None:
        parts.append(f"${max_cost:g}")
    return " and ".join(parts)


def check_tool_deadline(trace: Trace) -> Verdict | None:
    """No tool call still runs after the run's deadline; ``None`` when none ran as it came."""
    deadline = trace.expect.deadline_seconds
    # A call still in flight when the run ended (a crash, an abandoned hang) spans the
    # deadline only if the run itself lasted that long.
    run_end = max((i.ended_at for i in trace.incarnations), default=0.0)
    spanning = [i for i in trace.invocations if not i.refused and i.started_at < deadline
                and (i.ended_at if i.ended_at is not None else run_end) >= deadline - _EPS]
    if not spanning:
        return None  # the deadline never met a tool call: nothing to judge
    if trace.extra.plain:
        return Verdict("budget:tools", "unknown", UNTOLD_BUDGET)
    late = [f"{i.tool}#{i.call_id} started at {i.started_at:g}s and ran until "
            f"{'the end of the run' if i.ended_at is None else f'{i.ended_at:g}s'}"
            for i in spanning if i.ended_at is None or i.ended_at > deadline + _EPS]
    if late:
        return Verdict("budget:tools", "fail", f"{late[0]}; the deadline was {deadline:g}s",
                       tuple(late), advice="cut each tool's timeout to the time the run has "
                                           "left: a tool never runs past the shared deadline")
    return Verdict("budget:tools", "pass", f"{len(spanning)} tool call(s) running at the "
                   f"{deadline:g}s deadline were stopped by it")


def check_tool_calls(trace: Trace) -> Verdict | None:
    """budget:tool-calls: no tool call starts past the run's cap (seed 002 §19.2, ToolBudget).

    Counted over the whole run, every incarnation together, as distinct call ids the
    world ran (a call run again after a restart is still one call); a restart does not
    buy a fresh cap. ``unknown`` when the model never asked for a call past the cap (the
    cap was never tested), or the agent is a plain ``main(prompt)`` never told it.
    """
    cap = trace.extra.max_tool_calls
    if cap is None:
        return None
    if trace.extra.plain:
        return Verdict("budget:tool-calls", "unknown", UNTOLD_BUDGET)
    ran = list(dict.fromkeys(i.call_id for i in sorted(trace.invocations, key=lambda i: i.seq)
                             if not i.refused))
    asked = {c.call_id for r in trace.requests for c in r.calls}
    if len(ran) > cap:
        late = tuple(f"call {call_id} ran as call {n} of at most {cap}"
                     for n, call_id in enumerate(ran[cap:], start=cap + 1))
        return Verdict("budget:tool-calls", "fail", f"{len(ran)} tool calls ran; the cap is "
                       f"{cap}: {late[0]}", late,
                       advice="count the calls started (durably, across restarts) and stop "
                              "with budget_limited instead of starting one past the cap")
    return _cap_tested("budget:tool-calls", cap, len(ran), len(asked), calls="tool", did="ran")


def check_job_runtime(trace: Trace) -> Verdict | None:
    """budget:job-runtime: no background job outlives its runtime budget (seed 002 §19.2,
    BackgroundBudget(maxRuntime); 子预算只能消费父预算,不能自行续杯).

    Judged from the job runner's record alone, so it applies to any agent on the job
    port: the budget runs from the process's start the runner recorded, whatever
    incarnation started it; a job still running then must have been signalled by then,
    and be gone within :data:`TERM_FOLLOW_THROUGH_SECONDS` of that signal (TERM, then KILL
    for one that ignores it). An agent that counts from a restart, or waits a job out,
    fails. ``unknown`` when no job ran longer than the budget, when the agent started no
    job (no job port), or for a plain ``main(prompt)`` that is never told the budget.
    """
    budget = trace.extra.max_job_seconds
    if budget is None:
        return None
    jobs = _agents_jobs(trace, "budget:job-runtime", "budget")
    if isinstance(jobs, Verdict):
        return jobs
    run_end = max((i.ended_at for i in trace.incarnations), default=0.0)
    tolerance = late_tolerance(trace)
    over = [j for j in jobs if (j.ended_at if j.ended_at is not None else run_end)
            > j.started_at + budget + tolerance + _EPS]
    if not over:
        return Verdict("budget:job-runtime", "unknown", f"no background job ran longer than its "
                       f"runtime budget of {budget:g}s ({len(jobs)} ended within it, or the "
                       "run ended first)")
    late = [why for job in over
            if (why := _outran(job, budget, run_end, tolerance)) is not None]
    if late:
        return Verdict("budget:job-runtime", "fail", f"{late[0]}; the runtime budget is "
                       f"{budget:g}s from the process's start{tolerance_note(tolerance)}",
                       tuple(late),
                       advice="stop a background job (TERM, then KILL) when its runtime "
                              "budget, counted from the process's recorded start, runs out; a "
                              "restart that re-attaches to it grants no time anew")
    return Verdict("budget:job-runtime", "pass", f"{len(over)} background job(s) still running at "
                   f"the end of the {budget:g}s runtime budget were stopped by it")


def _outran(job: JobRecord, budget: float, run_end: float, tolerance: float) -> str | None:
    """Why ``job`` broke its runtime budget, or None when it was stopped in time."""
    limit = job.started_at + budget
    first = min(job.signals, key=lambda s: s.at, default=None)
    if first is None or first.at > limit + tolerance + _EPS:
        when = "was never signalled" if first is None else \
            f"was first signalled at {first.at:g}s ({first.signal})"
        return (f"{_job_named(job)} {when} and ran until {_job_until(job)}, past its budget's "
                f"end at {limit:g}s")
    return _not_followed_through(job, first, "as its budget ran out", run_end, tolerance)


def check_job_starts(trace: Trace) -> Verdict | None:
    """budget:job-starts: no background job starts past the run's cap (seed 002 §19.2,
    BackgroundBudget(maxJobs); 子预算只能消费父预算,不能自行续杯).

    Counted from the job runner's record, every incarnation together (a restart buys no
    fresh cap). ``unknown`` when the model never asked for more job calls than the cap,
    when the agent started no job (no job port), or for a plain ``main(prompt)``.
    """
    cap = trace.extra.max_jobs
    if cap is None:
        return None
    started = _agents_jobs(trace, "budget:job-starts", "cap")
    if isinstance(started, Verdict):
        return started
    jobs = sorted(started, key=lambda j: j.started_at)
    if len(jobs) > cap:
        late = tuple(f"{j.tool} job {j.execution_id} (call {j.call_id}) started at "
                     f"{j.started_at:g}s by incarnation {j.incarnation}, as job {n} of at most "
                     f"{cap}" for n, j in enumerate(jobs[cap:], start=cap + 1))
        return Verdict("budget:job-starts", "fail", f"{len(jobs)} background jobs started; the "
                       f"cap is {cap}: {late[0]}", late,
                       advice="count the jobs started (durably, across restarts) and stop with "
                              "budget_limited instead of starting one past the cap")
    declared = set(trace.extra.jobs_declared or ())
    asked = {c.call_id for r in trace.requests for c in r.calls if c.name in declared}
    return _cap_tested("budget:job-starts", cap, len(jobs), len(asked), calls="job",
                       did="started a job")


def _cap_tested(invariant: str, cap: int, started: int, asked: int, *, calls: str,
                did: str) -> Verdict:
    """``invariant`` held its cap of ``cap`` with ``started`` of the ``asked`` ``calls``
    calls: ``unknown`` when the model never asked for more than the cap (it was never
    tested), else a pass saying how many ``did``."""
    if asked <= cap:
        return Verdict(invariant, "unknown", f"the model asked for {asked} {calls} call(s), "
                       f"never more than the cap of {cap}")
    return Verdict(invariant, "pass", f"{started} of the {asked} {calls} calls the model "
                   f"asked for {did}, within the cap of {cap}")


def check_job_output(trace: Trace) -> Verdict | None:
    """budget:job-output: no background job goes on writing past its output budget (seed 002
    §19.2, BackgroundBudget(maxOutput); 子预算只能消费父预算,不能自行续杯).

    Judged from the job runner's record alone (the lines each job wrote, the reads of its
    output, its signals and exit), so it applies to any agent on the job port. The lines
    count from the job's first, whichever incarnation read them: a job that wrote more
    than the budget must have been signalled no later than the first read, of any
    incarnation, that showed it past the budget (an agent that reads on from a restart's
    offset and counts afresh signals later), and be gone within
    :data:`TERM_FOLLOW_THROUGH_SECONDS` of that signal. One never signalled, run to its end,
    fails whether or not it was read. How often an agent reads is its own: the stop is held
    to the read that told it. ``unknown`` when no job wrote past the budget, when the agent
    started no job (no job port), or for a plain ``main(prompt)`` never told the budget.
    """
    budget = trace.extra.max_job_output_lines
    if budget is None:
        return None
    jobs = _agents_jobs(trace, "budget:job-output", "budget")
    if isinstance(jobs, Verdict):
        return jobs
    over = [j for j in jobs if j.lines > budget]
    if not over:
        return Verdict("budget:job-output", "unknown", f"no background job wrote more than its "
                       f"output budget of {budget} lines ({len(jobs)} wrote within it)")
    run_end = max((i.ended_at for i in trace.incarnations), default=0.0)
    tolerance = late_tolerance(trace)
    late = [why for job in over
            if (why := _wrote_past(job, budget, run_end, tolerance)) is not None]
    if late:
        return Verdict("budget:job-output", "fail", f"{late[0]}; the output budget is {budget} "
                       f"lines from the job's first{tolerance_note(tolerance)}", tuple(late),
                       advice="stop a background job (TERM, then KILL) as soon as a read shows "
                              "its output past the budget, counted from its first line by the "
                              "runner's offset; a restart that re-attaches to it grants no "
                              "output anew")
    return Verdict("budget:job-output", "pass", f"{len(over)} background job(s) that wrote past "
                   f"the output budget of {budget} lines were stopped at the read that showed it")


def _wrote_past(job: JobRecord, budget: float, run_end: float, tolerance: float) -> str | None:
    """Why ``job`` broke its output budget, or None when it was stopped in time."""
    name = _job_named(job)
    first = min(job.signals, key=lambda s: s.at, default=None)
    if first is None:
        return (f"{name} wrote {job.lines} lines, past its budget of {budget:g}, and was never "
                f"signalled: it ran until {_job_until(job)}")
    shown = min((r for r in job.reads if r.next_offset > budget), key=lambda r: r.at,
                default=None)
    if shown is not None and first.at > shown.at + tolerance + _EPS:
        return (f"{name} was read past its budget at {shown.at:g}s (line {shown.next_offset}, "
                f"by incarnation {shown.incarnation}) yet first signalled at {first.at:g}s "
                f"({first.signal}, by incarnation {first.incarnation})")
    return _not_followed_through(job, first, "past its output budget", run_end, tolerance)


def _not_followed_through(job: JobRecord, first: SignalRecord, when: str, run_end: float,
                          tolerance: float) -> str | None:
    """Why ``job``, ``first`` signalled ``when``, was not gone within
    :data:`TERM_FOLLOW_THROUGH_SECONDS` of that signal; None: it was."""
    gone_by = first.at + TERM_FOLLOW_THROUGH_SECONDS + tolerance + _EPS
    if (job.ended_at if job.ended_at is not None else run_end) <= gone_by:
        return None
    return (f"{_job_named(job)} got {first.signal} at {first.at:g}s, {when}, yet ran until "
            f"{_job_until(job)}: the stop was not followed through to KILL")


def _job_named(job: JobRecord) -> str:
    return f"{job.tool} job {job.execution_id} (started at {job.started_at:g}s)"


def _job_until(job: JobRecord) -> str:
    return f"{job.ended_at:g}s" if job.ended_at is not None else "the end of the run"


def _agents_jobs(trace: Trace, invariant: str, what: str) -> list[JobRecord] | Verdict:
    """The background jobs the agent started, or why ``invariant`` cannot judge its
    ``what`` (a budget, a cap) in this case: ``unknown`` for a plain ``main(prompt)``,
    never told it, and for an agent that started no job."""
    if trace.extra.plain:
        return Verdict(invariant, "unknown", UNTOLD_BUDGET)
    jobs = [j for j in trace.jobs if j.owner_session != NEIGHBOUR_SESSION]
    if not jobs:
        return Verdict(invariant, "unknown", "the agent started no background job (it has no "
                       f"job port, or never ran a job tool): the {what} was not tested")
    return jobs
