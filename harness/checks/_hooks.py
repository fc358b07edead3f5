"""L3:hook: an after-tool hook never fires within its own hook past the bound.

Seed 002 §19.1 ③ (钩子死循环防护): a hook whose own run fires the hook again loops
("钩子又触发钩子"); the fix is a recursion depth counter. A scenario's ``hook`` names the
tool the agent runs after each tool call that returned, and ``max_depth``, how deep the
hook may fire within its own runs (1: never after itself).

Judged from what the world ran, so it judges any agent told the hook: a run of the hook's
tool the model never asked for is a hook run. A call the model asked for may fire the
hook at most ``max_depth`` times in a row (depth 1, then each within the last), so a run
of consecutive hook runs after ``k`` such calls is at most ``k * max_depth`` long.
``unknown`` for a plain ``main(prompt)`` agent (never told the hook) and when no hook ran.
What the seed adds, that a hook does not fire when the task's record is incomplete, is
not judged: which record an outside agent holds cannot be seen from the world.

Example::

    check_hook_depth(trace)  # fail: "the hook status ran 2 times in a row after 1 call ..."
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.checks._verdict import Verdict
from harness.trace import InvocationRecord, Trace

_ID = "L3:hook"


@dataclass
class _Stretch:
    """Consecutive hook runs, and the calls the model asked for that came just before."""

    triggers: int = 0
    runs: list[str] | None = None

    def allowed(self, bound: int) -> int:
        return max(self.triggers, 1) * bound


def _too_deep(invocations: list[InvocationRecord], hook: str, asked: set[str],
              bound: int) -> tuple[int, str | None]:
    """The hook runs seen, and the first stretch of them past the bound (its evidence)."""
    stretch, seen = _Stretch(), 0
    for invocation in invocations:
        if invocation.tool != hook or invocation.call_id in asked:
            if stretch.runs is not None:
                stretch = _Stretch()
            stretch.triggers += 1
            continue
        seen += 1
        stretch.runs = [*(stretch.runs or []), invocation.call_id]
        if len(stretch.runs) > stretch.allowed(bound):
            return seen, (f"the hook {hook} ran {len(stretch.runs)} times in a row after "
                          f"{stretch.triggers} call(s); at most {stretch.allowed(bound)} with "
                          f"the depth bound {bound}: {invocation.call_id} fired within its "
                          "own hook")
    return seen, None


def is_hook_run(trace: Trace, invocation: InvocationRecord) -> bool:
    """``invocation`` ran the scenario's hook tool under an id the model never sent: the
    agent's hook ran it, so no answer of the model was its source (I7 leaves it out)."""
    hook = trace.extra.hook_tool
    return hook is not None and invocation.tool == hook and invocation.call_id not in {
        c.call_id for r in trace.requests for c in r.calls}


def check_hook_depth(trace: Trace) -> Verdict | None:
    """L3:hook: no hook run re-entered its own hook past ``hook.max_depth``."""
    hook, bound = trace.extra.hook_tool, trace.extra.hook_max_depth
    if hook is None or bound is None:
        return None
    if trace.extra.plain:
        return Verdict(_ID, "unknown", "a plain main(prompt) agent is not told the hook")
    asked = {c.call_id for r in trace.requests for c in r.calls}
    ran = [i for i in sorted(trace.invocations, key=lambda i: i.seq) if not i.refused]
    seen, deep = _too_deep(ran, hook, asked, bound)
    if deep is not None:
        return Verdict(_ID, "fail", deep, (deep,),
                       advice="count the hook's depth and fire no hook within a hook past "
                              "the bound (seed 002 §19.1: 递归深度计数器)")
    if seen == 0:
        return Verdict(_ID, "unknown", f"the hook {hook} never ran, so it never re-entered")
    return Verdict(_ID, "pass", f"the hook {hook} ran {seen} time(s), never deeper than "
                   f"{bound} within its own runs")
