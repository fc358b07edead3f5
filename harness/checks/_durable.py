"""What the agent's durable files hold: J6 and J3.

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

Example::

    check_disk_error_stops(trace)   # fail: "mail call call_t2_0 started after the disk error"
    check_secrets_stay_out(trace)   # fail: "mail.password found in /state/session.jsonl …"
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
