"""The after-tool hook and its recursion guard (seed 002 §19.1 ③, 钩子死循环防护).

A scenario may declare a hook: a tool the agent runs after each tool call that returned.
The hook's own run is a tool call too, so a hook that fires after every call fires after
itself: "钩子又触发钩子". The seed's fix is a recursion depth counter: a call the model
asked for fires the hook at depth 1, the hook's call fires it at depth 2, and the hook
never fires past ``Task.hook_max_depth``. A call whose record is not complete (not run,
outcome unknown, timed out, cancelled) fires no hook: "当前任务记录已经不完整时不再触发钩子".

The hook's run is not journaled and its reply never reaches the model: it is a read
(the scenario's hook tool), so running it again after a restart changes nothing.

Example::

    await run_after_tool_hooks(runner, task, replies, context)  # status after each call
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from harness.agent._tools import ToolReply
from harness.ports import Task, Tool, ToolContext, ToolInvocation

#: Builds the context a hook's call runs with (the run id, incarnation and clock).
HookContext = Callable[[ToolInvocation], ToolContext]


def hook_call_id(call_id: str, depth: int) -> str:
    """The id of the hook's run at ``depth`` after the call ``call_id``.

    >>> hook_call_id("call_t1_0", 1)
    'hook_call_t1_0_1'
    """
    return f"hook_{call_id}_{depth}"


async def run_after_tool_hooks(tools: dict[str, Tool], task: Task,
                               replies: Sequence[ToolReply], context: HookContext,
                               *, slack: int = 0) -> None:
    """Fire the task's after-tool hook after each call of ``replies`` that returned ``ok``.

    ``slack`` lets the hook fire that many levels past the bound: only a broken agent
    sets it (the mutant catalogue's off-by-one guard).
    """
    hook = task.after_tool_hook
    if hook is None or hook not in tools:
        return
    for reply in replies:
        if reply.status == "ok":
            await _fire(tools[hook], reply, task.hook_max_depth + slack, context)


async def _fire(tool: Tool, trigger: ToolReply, bound: int, context: HookContext) -> None:
    """The hook after ``trigger``, and after each of its own runs while depth allows."""
    depth = 1
    while depth <= bound:
        call = ToolInvocation(trigger.turn_id, hook_call_id(trigger.call_id, depth),
                              tool.name, {})
        if not await _ran(tool, call, context):
            return  # a hook run that failed is a record not complete: no hook after it
        depth += 1


async def _ran(tool: Tool, call: ToolInvocation, context: HookContext) -> bool:
    try:
        await tool.run(dict(call.arguments), context(call))
    except Exception:  # a failing hook never fails the run; it just fires nothing more
        return False
    return True
