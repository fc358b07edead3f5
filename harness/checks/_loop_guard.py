"""L3 as a checker: the same failing call is not repeated without end.

Seed 002 §19.1 ③ (错误签名去重: the same fingerprint again without new evidence
must not continue the same plan) and §19.6 (重复错误停止率: a repeated identical
error always ends in a stop or a change of approach). The fingerprint is the
tool, its arguments and how its reply failed; a streak is that fingerprint in
consecutive assistant turns.

Example::

    verdict = check_l3(trace)   # fail: "deploy {...} failed 5 turns in a row"
"""

from __future__ import annotations

from harness.checks._verdict import Verdict
from harness.trace import MessageRecord, Trace

#: How many times in a row one failing call may be sent before the agent must
#: have stopped or changed course: a first try, one retry after new evidence
#: could have arrived, and a reminder turn (the reference loop stops at the third).
REPEAT_LIMIT = 3
_FAILED = frozenset({"error", "timeout"})

Fingerprint = tuple[str, str, str]


def check_l3(trace: Trace) -> Verdict:
    """Fail when one failing call is sent more than :data:`REPEAT_LIMIT` turns in a row."""
    if trace.outcome is None:
        return Verdict("L3", "unknown", f"the run produced no outcome ({trace.error})")
    streak, fingerprint = _longest_streak(_failing_turns(trace.outcome.transcript))
    if streak < 2 or fingerprint is None:
        return Verdict("L3", "unknown", "no failing call was repeated in this run")
    tool, arguments, status = fingerprint
    shown = f"{tool} {arguments} ({status}) failed {streak} turns in a row"
    if streak > REPEAT_LIMIT:
        return Verdict("L3", "fail", f"{shown}; expected a stop or a change of course "
                       f"after at most {REPEAT_LIMIT}", (f"stopped: {trace.outcome.reason}",))
    return Verdict("L3", "pass", f"{shown}, then the run stopped or changed course",
                   (f"stopped {trace.outcome.stop_state}: {trace.outcome.reason}",))


def _failing_turns(messages: tuple[MessageRecord, ...]) -> list[frozenset[Fingerprint]]:
    """For each assistant turn, the fingerprints of its calls whose reply failed."""
    status = {m.call_id: m.status for m in messages if m.role == "tool"}
    return [
        frozenset((name, arguments, status[call_id] or "")
                  for call_id, name, arguments in m.tool_calls
                  if status.get(call_id) in _FAILED)
        for m in messages if m.role == "assistant"
    ]


def _longest_streak(turns: list[frozenset[Fingerprint]]) -> tuple[int, Fingerprint | None]:
    best: tuple[int, Fingerprint | None] = (0, None)
    running: dict[Fingerprint, int] = {}
    for failing in turns:
        # Sorted: set order follows string hashing, which differs between processes;
        # on a tie the streak reached first, then the smallest fingerprint, is named.
        running = {fp: running.get(fp, 0) + 1 for fp in sorted(failing)}
        for fp, count in running.items():
            best = max(best, (count, fp), key=lambda pair: pair[0])
    return best
