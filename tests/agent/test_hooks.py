"""The reference agent's after-tool hook and its recursion depth counter (seed 002 §19.1 ③)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from fakes import VirtualClock
from harness.agent._hooks import run_after_tool_hooks
from harness.agent._tools import ToolReply
from harness.ports import Task, ToolContext, ToolInvocation


class _Status:
    """A read tool that notes each run's call id, and fails when told to."""

    name = "status"
    concurrency_safe = True
    idempotent = True

    def __init__(self, *, fail: bool = False) -> None:
        self.ran: list[str] = []
        self.fail = fail

    async def run(self, arguments: Mapping[str, Any], context: ToolContext) -> Any:
        self.ran.append(context.invocation.call_id)
        if self.fail:
            raise OSError("status unavailable")
        return {"ok": True}


def _context(call: ToolInvocation) -> ToolContext:
    return ToolContext(call, call.call_id, "run", 1, VirtualClock())


def _hooks(tool: _Status, replies: list[ToolReply], *, depth: int = 2, slack: int = 0) -> None:
    task = Task("p", after_tool_hook="status", hook_max_depth=depth)
    asyncio.run(run_after_tool_hooks({"status": tool}, task, replies, _context, slack=slack))


def test_each_returned_call_fires_the_hook_to_its_depth_and_no_deeper() -> None:
    tool = _Status()
    _hooks(tool, [ToolReply("t1", "a", "ok", {}), ToolReply("t1", "b", "ok", {})])
    assert tool.ran == ["hook_a_1", "hook_a_2", "hook_b_1", "hook_b_2"]


def test_a_call_whose_record_is_incomplete_fires_no_hook() -> None:
    # 当前任务记录已经不完整时不再触发钩子: not run, unknown, timed out, cancelled.
    tool = _Status()
    _hooks(tool, [ToolReply("t1", c, s, {}) for c, s in
                  (("a", "not_started"), ("b", "unknown"), ("c", "timeout"),
                   ("d", "cancelled"))])
    assert tool.ran == []


def test_a_failed_hook_run_fires_nothing_after_it() -> None:
    tool = _Status(fail=True)
    _hooks(tool, [ToolReply("t1", "a", "ok", {})], depth=3)
    assert tool.ran == ["hook_a_1"]


def test_slack_lets_the_hook_fire_past_its_bound() -> None:
    # The mutant catalogue's off-by-one guard: one level more than the task allows.
    tool = _Status()
    _hooks(tool, [ToolReply("t1", "a", "ok", {})], depth=1, slack=1)
    assert tool.ran == ["hook_a_1", "hook_a_2"]


def test_no_hook_without_one_declared() -> None:
    tool = _Status()
    asyncio.run(run_after_tool_hooks({"status": tool}, Task("p"),
                                     [ToolReply("t1", "a", "ok", {})], _context))
    assert tool.ran == []
