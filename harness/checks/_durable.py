"""What the agent's durable files hold: J6, J3 and J4.

J6: once the trusted log cannot be written, no further side effect runs.

Seed 002 §19.6: "运行指标写失败不应阻断 Agent;会话可信记录写入失败时,继续执行有副作用的
动作之前必须停止" — the metrics stream may drop records, the trusted session log may
not: a side effect the log cannot record could never be recovered correctly. In a
case whose crash class is a disk error (EIO, ENOSPC), the world notes for every tool
call whether the error had already been raised when it started.

J3 (seed 000 §5: "诊断日志在持久化前对结构化敏感字段脱敏"): no secret a tool call was
handed — a value under an argument the scenario marks ``secret`` or under a
secret-looking key — appears in any file the agent wrote, looked for after every
incarnation (:mod:`harness.runner._secrets`). The evidence names the file, the byte
offset and the argument, never the value.

J4 (seed 000 §2.1; DESIGN §5 J4): a call whose last durable journal record at a crash
is ``intent`` never started (J1: the start record is durable before the tool runs), so
the restart reports it ``interrupted_before_execution``, safe to call again; reporting
it ``unknown_after_restart`` sends the model to inspect what never happened. The world
reads the journal off the files the crash left (``never_started`` in ``Trace.extra``,
:mod:`harness.runner._never_started`) and the ledger shows the call never ran.

Example::

    check_disk_error_stops(trace)   # fail: "mail call call_t2_0 started after the disk error"
    check_secrets_stay_out(trace)   # fail: "mail.password found in /state/session.jsonl …"
    check_never_started_reported(trace)  # fail: "notes call call_t1_0 never started …"
"""

from __future__ import annotations

from harness.checks._verdict import Verdict
from harness.trace import Trace

_WRITERS = frozenset({"append", "send", "put"})


def check_disk_error_stops(trace: Trace) -> Verdict | None:
    """Fail when a writing tool started after the case's disk error; ``None``: no such case."""
    if not trace.crash.error_class:
        return None
    if trace.crash.fired is None:
        return Verdict("J6", "unknown", "the disk error was never raised")
    kinds = dict(trace.expect.tool_kinds)
    late = [i for i in trace.invocations if i.after_disk_error and not i.refused
            and kinds.get(i.tool) in _WRITERS]
    if late:
        return Verdict("J6", "fail", f"{late[0].tool} call {late[0].call_id} started after the "
                       f"disk error at {trace.crash.fired}; no side effect may run once the "
                       "trusted log cannot be written",
                       tuple(f"{i.tool} call {i.call_id} started at {i.started_at:g}s"
                             for i in late),
                       advice="stop (infra_paused) when a write to the trusted log fails; only "
                              "the metrics stream may drop records")
    return Verdict("J6", "pass", f"no side effect started after the disk error at "
                   f"{trace.crash.fired}")


def check_secrets_stay_out(trace: Trace) -> Verdict:
    """Fail when a secret of the case is in a file the agent wrote; ``unknown`` without one."""
    record = trace.secrets
    if record is None:
        return Verdict("J3", "unknown", "nothing secret to look for: the scenario marks no "
                       "argument secret and no call passed a value under a secret-looking key")
    if record.leaks:
        first = record.leaks[0]
        return Verdict("J3", "fail", f"{first.secret} found in {first.path} at byte "
                       f"{first.offset}; a durable file must never hold a secret argument",
                       tuple(f"{leak.secret} in {leak.path} at byte {leak.offset} (after "
                             f"incarnation {leak.incarnation})" for leak in record.leaks),
                       advice="redact secret arguments before anything durable is written; "
                              "keep a digest or the idempotency key for recovery, never the "
                              "value")
    if record.files == 0:
        return Verdict("J3", "unknown", "the agent wrote no durable file to look in")
    return Verdict("J3", "pass", f"{', '.join(record.looked_for)} in none of the agent's "
                   f"{record.files} file(s)")


def check_never_started_reported(trace: Trace) -> Verdict | None:
    """Fail when a call the durable journal proves never started was reported unknown (J4).

    ``None`` when no crash left such a call: there is nothing to judge, and the case
    keeps the verdicts it had.
    """
    proved = trace.extra.never_started or ()
    if not proved:
        return None
    if trace.outcome is None:
        return Verdict("J4", "unknown", "the run produced no outcome to read the replies from")
    replies = {m.call_id: m for m in trace.outcome.transcript if m.role == "tool"}
    wrong: list[str] = []
    right: list[str] = []
    for item in proved:
        call, tool, incarnation = item.call_id, item.tool, item.incarnation
        ran = any(i.call_id == call and i.incarnation < incarnation and not i.refused
                  for i in trace.invocations)
        reply = replies.get(call)
        if reply is None or ran:
            continue  # no reply to judge, or the journal broke J1 (I1 judges what ran)
        line = f"{tool} call {call}: its last durable record was intent; replied {reply.status}"
        (wrong if reply.status == "unknown" else right).append(line)
    if wrong:
        return Verdict("J4", "fail", f"{wrong[0].split(':')[0]} never started (the journal the "
                       "crash left ends at its intent, the ledger shows no run) yet the restart "
                       "reported it unknown_after_restart", tuple(wrong),
                       advice="on restart, a call whose last record is intent did not start: "
                              "report it interrupted_before_execution, safe to call again; "
                              "only one whose start record is durable is unknown")
    if not right:
        return Verdict("J4", "unknown", "no call the journal proves never started has a reply "
                       "in the transcript")
    return Verdict("J4", "pass", f"{len(right)} call(s) the journal proves never started, "
                   "none reported unknown", tuple(right))
