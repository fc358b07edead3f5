"""The checks every case gets, whatever its ``expect.invariants`` list says.

They judge from the world's record alone (requests with virtual times, the
ledger, invocations with start and end times), so they apply to any agent; each
is ``unknown`` where the run gave nothing to judge (DESIGN §4). A check returns
``None`` when the scenario declares nothing it is about.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.checks._backup import check_backup
from harness.checks._breaker import check_breaker
from harness.checks._budgets import (
    check_job_output,
    check_job_runtime,
    check_job_starts,
    check_spend,
    check_tool_calls,
    check_tool_deadline,
)
from harness.checks._cache import check_cache_after_restart
from harness.checks._children import check_child_environments
from harness.checks._compaction import check_compaction_keeps, check_overflow_retry
from harness.checks._doom_loop import check_doom_loop
from harness.checks._durable import (
    check_disk_error_stops,
    check_never_started_reported,
    check_secrets_stay_out,
)
from harness.checks._goal_cancel import check_goal_cancel
from harness.checks._goal_context import check_goal_in_context
from harness.checks._goal_status import check_goal_status
from harness.checks._hooks import check_hook_depth
from harness.checks._jobs import (
    check_cancels,
    check_held_after_return,
    check_jobs,
    check_wakeups,
)
from harness.checks._lease import check_lease
from harness.checks._path_queue import check_path_queue
from harness.checks._protected import check_protected
from harness.checks._replies import check_replies_match
from harness.checks._timing import (
    check_429_cap,
    check_backoff,
    check_client_errors,
    check_idle_watchdog,
    check_overlap,
    check_retry_after,
    check_settle,
)
from harness.checks._tool_output import check_tool_output
from harness.checks._training import check_no_patch
from harness.checks._truncation import check_output_limit
from harness.checks._usage import check_context_tokens
from harness.checks._vacuity import check_faults_reached, check_outcome
from harness.checks._verdict import Verdict
from harness.checks._withheld import check_withheld_calls
from harness.trace import Trace

ALWAYS: tuple[Callable[[Trace], Verdict | None], ...] = (
    check_outcome,
    check_faults_reached,
    check_idle_watchdog,
    check_retry_after,
    check_429_cap,
    check_client_errors,
    check_backoff,
    check_settle,
    check_overlap,
    check_path_queue,
    check_replies_match,
    check_withheld_calls,
    check_context_tokens,
    check_disk_error_stops,
    check_jobs,
    check_wakeups,
    check_cancels,
    check_held_after_return,
    check_goal_cancel,
    check_secrets_stay_out,
    check_never_started_reported,
    check_compaction_keeps,
    check_overflow_retry,
    check_breaker,
    check_spend,
    check_tool_deadline,
    check_tool_calls,
    check_job_runtime,
    check_job_starts,
    check_job_output,
    check_tool_output,
    check_cache_after_restart,
    check_goal_in_context,
    check_lease,
    check_protected,
    check_goal_status,
    check_child_environments,
    check_doom_loop,
    check_output_limit,
    check_hook_depth,
    check_no_patch,
    check_backup,
)


def always_verdicts(trace: Trace) -> list[Verdict]:
    """The verdicts of :data:`ALWAYS` that apply to ``trace``, in that order."""
    return [v for v in (check(trace) for check in ALWAYS) if v is not None]
