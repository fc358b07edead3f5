"""context:tool-output: a long tool result is not carried whole in the requests after it.

Seed 002 §19.2: 会话事件日志能保存工具调用和结果,但证据不会因此"天然可靠":还要保证
关键结果确实写入长期保存的日志、超长输出有稳定引用、系统能从这些记录重建状态; §19.6: 步骤
只保存诊断所需的……证据引用,不要默认复制全部 prompt、源码和工具输出. Real agents cut it
(codex's ``tool_output_token_limit``, Claude Code's cut command output). A scenario that
declares ``expect.max_tool_result_chars`` records, for each request, every tool result it
carried and its length as the model reads it; judged from what the provider saw, so it
judges any agent:

- ``fail``: a request carried a tool result longer than the limit (the first such request,
  its call and size are named);
- ``pass``: a tool returned a result longer than the limit (its canonical JSON in the
  world's record), a later request carried that call's result, and every request carried
  at most the limit of any result. That the part sent names a stable reference to the whole
  output, which a restart still finds, is not seen from outside: the reference agent's
  tests hold it (``tests/agent/test_output_spill.py``);
- ``unknown``: no tool returned a result longer than the limit, or no request after one
  carried its result;
- ``None``: the scenario declares no limit.

Example::

    check_tool_output(trace)  # fail: "request #2 carried the result of call_t1_0 (build) …"
"""

from __future__ import annotations

from typing import Final

from harness.checks._verdict import Verdict
from harness.trace import Trace

_ID: Final = "context:tool-output"
_ADVICE: Final = ("keep a tool result longer than the limit whole where it can be read again "
                  "(a file written before the reply is committed) and send the model a part "
                  "of it, its size and that reference")
_NOT_SEEN: Final = ("that the part names a stable reference to the whole output is not "
                    "seen from outside")


def check_tool_output(trace: Trace) -> Verdict | None:
    """Fail when a request carried a tool result over the limit; ``None`` without a limit."""
    limit = trace.extra.max_tool_result_chars
    if limit is None:
        return None
    carried = trace.extra.inline_results or ()
    tools = {i.call_id: i.tool for i in trace.invocations}
    over = [f"request #{r.request} carried the result of {r.call_id} "
            f"({tools.get(r.call_id, 'a tool')}) inline: {r.chars:,} characters"
            for r in carried if r.chars > limit]
    if over:
        return Verdict(_ID, "fail", f"{over[0]}; the most one request may carry is {limit:,}",
                       tuple(over[:12]), advice=_ADVICE)
    long = {i.call_id: len(i.result) for i in trace.invocations
            if i.result is not None and len(i.result) > limit}
    if not long:
        return Verdict(_ID, "unknown", f"no tool returned a result longer than {limit:,} "
                       "characters: nothing to judge")
    later = [r for r in carried if r.call_id in long]
    if not later:
        return Verdict(_ID, "unknown", f"{len(long)} tool result(s) were longer than "
                       f"{limit:,} characters, but no request after them carried their reply")
    call_id, size = max(long.items(), key=lambda item: (item[1], item[0]))
    return Verdict(_ID, "pass", f"{len(long)} tool result(s) were longer than {limit:,} "
                   f"characters (the longest, {call_id} ({tools[call_id]}), {size:,}); the "
                   f"{len({r.request for r in later})} request(s) that carried them carried at "
                   f"most {max(r.chars for r in later):,} of each ({_NOT_SEEN})")
