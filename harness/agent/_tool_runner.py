"""Run tool calls through the journal, with timeouts that wait for the tool to settle.

For each call (seed 000 §1.1 ``runOneToolCall``; DESIGN J1, J6, J7):

1. ``intent`` is written durably;
2. ``execution_started`` is written durably — if that fails (EIO, ENOSPC) the
   tool never runs and the model gets TOOL_NOT_STARTED (seed 002 §19.1);
3. the tool runs under a per-call timeout on the :class:`Clock` port. On
   expiry the tool is cancelled and the runner *waits for it to settle* (seed
   002 §19.1, "why a tool timeout cannot be a bare Promise.race") before it
   reports ``timeout``; a subprocess tool kills its process group on cancel;
4. a result longer than the inline limit is kept whole in a file (``spill``,
   :mod:`._output_spill`) and its reply becomes a part of it and that reference;
5. ``result`` is written durably; only then does the model hear ``ok``. If it (or the
   long result's file) cannot be written, the model hears TOOL_OUTCOME_UNKNOWN.

Once the journal fails, the runner is ``halted`` (J6: no further side effect
runs while the trusted log cannot be written); later calls get
TOOL_NOT_STARTED without running.

Example::

    runner = ToolRunner(journal, {"send": send_tool}, clock=clock, incarnation=1)
    replies = await runner.run_batch([call_1, call_2])
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from harness._errors import DiskError
from harness.agent._budget_tree import SubBudget
from harness.agent._journal import Outcome, ToolJournal
from harness.agent._output_spill import OutputSpill
from harness.agent._tools import ToolReply, not_started_reply, reply_lost, unknown_reply
from harness.ports import Clock, Tool, ToolContext, ToolInvocation, named_path

DEFAULT_TIMEOUT_SECONDS = 120.0
#: What a child process a tool starts needs of the agent's environment (seed 000 §5: shell,
#: background jobs, hooks and MCP children get a cleaned one): where programs are, the
#: user, the locale, the time zone, the temporary folder. Never the model provider's key.
CHILD_VARIABLES = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "TZ",
    "TMPDIR", "TMP", "TEMP",
})
# Strict JSON: a NaN is no JSON value, and a provider rejects a body holding one.
_RESULT_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


class ToolRunner:
    """Runs calls of one incarnation; see the module docstring."""

    def __init__(
        self,
        journal: ToolJournal,
        tools: Mapping[str, Tool],
        *,
        clock: Clock,
        incarnation: int,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        timeouts: Mapping[str, float] | None = None,
        budget: SubBudget | None = None,
        queue_by_path: bool = True,
        lost_replies_unknown: bool = True,
        spill: OutputSpill | None = None,
    ) -> None:
        self.journal = journal
        self.tools = dict(tools)
        self.clock = clock
        self.incarnation = incarnation
        self.timeout = timeout
        self.timeouts = dict(timeouts or {})
        # The tool budget (seed 002 §19.2): spends only the run's time, never past its deadline.
        self.budget = budget
        # Seed 002 §19.5 (同一真实文件路径的内部修改还会排队): calls of one batch that name
        # the same path run one after another, in the model's order, even when safe to run
        # beside others; calls of other paths still run together.
        self.queue_by_path = queue_by_path
        # Seed 000 §4 (是否送达还不清楚): a tool whose answer was lost after its request went
        # out may have taken effect; its reply says so, never "error", which reads as not done.
        self.lost_replies_unknown = lost_replies_unknown
        # Seed 002 §19.2 (超长输出有稳定引用): a long result is kept whole, sent in part.
        self.spill = spill
        self.halted: DiskError | None = None
        # Cancellation by target (seed 002 §19.4): the calls running now, the calls a
        # cancel named, and why calls not started yet must not start (a turn cancel).
        self.live: dict[str, asyncio.Future[Any]] = {}
        self.cancelled_calls: set[str] = set()
        self.refusing: str | None = None

    async def run_batch(self, calls: Sequence[ToolInvocation]) -> list[ToolReply]:
        """Run one assistant message's calls; replies come back in the model's order.

        All calls run together only if every tool is ``concurrency_safe`` (L2), and
        then those naming one path (:func:`harness.ports.named_path`) queue behind each
        other (L2:path); each records its result as it completes, so the journal keeps
        the completion order.
        """
        if all(self._concurrency_safe(c) for c in calls):
            queues: dict[str, asyncio.Lock] = {}
            return list(await asyncio.gather(*(self._queued(c, queues) for c in calls)))
        return [await self.run(c) for c in calls]

    async def _queued(self, call: ToolInvocation, queues: dict[str, asyncio.Lock]) -> ToolReply:
        """Run ``call`` once the calls before it in the batch that name its path are done."""
        path = named_path(call.arguments) if self.queue_by_path else None
        if path is None:
            return await self.run(call)
        # An asyncio lock wakes its waiters first come, first served: the model's order.
        async with queues.setdefault(path, asyncio.Lock()):
            return await self.run(call)

    def _concurrency_safe(self, call: ToolInvocation) -> bool:
        tool = self.tools.get(call.tool)
        return tool is not None and tool.concurrency_safe

    async def run(self, call: ToolInvocation) -> ToolReply:
        """Run one call through intent → execution_started → tool → result."""
        if self.halted is not None:
            return not_started_reply(call, f"the journal cannot be written: {self.halted}")
        if self.refusing is not None:
            return not_started_reply(call, self.refusing)
        tool = self.tools.get(call.tool)
        try:
            execution_id = self.journal.record_intent(call)
        except DiskError as exc:
            return self._halt(exc, not_started_reply(call, f"intent not recorded: {exc}"))
        if tool is None:
            return self._reject(call, execution_id)
        spent = self._budget_spent()
        if spent is not None:
            self._close(execution_id, "blocked_before_execution")
            return not_started_reply(call, spent)
        try:
            self.journal.record_started(execution_id)
        except DiskError as exc:
            self._close(execution_id, "blocked_before_execution")
            return self._halt(exc, not_started_reply(call, f"start not recorded: {exc}"))
        reply, outcome, result = await self._execute(tool, call, execution_id)
        if self.spill is not None and reply.status == "ok":
            try:
                reply = self.spill.bounded(reply, execution_id)
            except DiskError as exc:
                return self._halt(
                    exc, unknown_reply(call, f"it ran, but its output was not saved: {exc}")
                )
            result = reply.content
        try:
            self.journal.record_result(execution_id, outcome, result)
        except DiskError as exc:
            return self._halt(
                exc, unknown_reply(call, f"it ran, but its result was not saved: {exc}")
            )
        return reply

    def _budget_spent(self) -> str | None:
        if self.budget is None or self.budget.acquire(now=self.clock.now()):
            return None
        return f"not run: {self.budget.exhausted_reason(self.clock.now())}"

    def _reject(self, call: ToolInvocation, execution_id: str) -> ToolReply:
        reply = not_started_reply(call, f"no tool named {call.tool!r}; known: {sorted(self.tools)}")
        self._close(execution_id, "rejected_before_execution")
        return reply

    def _close(self, execution_id: str, outcome: Outcome) -> None:
        try:
            self.journal.record_result(execution_id, outcome)
        except DiskError as exc:
            # Recovery closes it after the restart; nothing ran, so nothing is lost.
            self.halted = self.halted or exc

    def _halt(self, error: DiskError, reply: ToolReply) -> ToolReply:
        self.halted = self.halted or error
        return reply

    async def _execute(
        self, tool: Tool, call: ToolInvocation, execution_id: str
    ) -> tuple[ToolReply, Outcome, Any]:
        context = ToolContext(call, execution_id, self.journal.run_id, self.incarnation, self.clock,
                              env=cleaned_environment())
        task = asyncio.ensure_future(tool.run(dict(call.arguments), context))
        limit = self.timeout_for(call.tool)
        if self.budget is not None:
            limit = self.budget.seconds_for(limit, now=self.clock.now())
        self.live[call.call_id] = task
        try:
            finished = await self._finishes_in_time(task, limit)
        finally:
            self.live.pop(call.call_id, None)
        if task.cancelled() and call.call_id in self.cancelled_calls:
            return cancelled_reply(call)
        if not finished:
            content = {
                "error": "TOOL_TIMEOUT",
                "message": f"{call.tool} was cancelled after {limit:g}s and has settled; "
                "it may have partly taken effect: inspect the real state before repeating",
            }
            return ToolReply(call.turn_id, call.call_id, "timeout", content), "timeout", content
        if task.cancelled():
            content = {"error": "CancelledError", "message": f"{call.tool} cancelled itself"}
            return ToolReply(call.turn_id, call.call_id, "error", content), "returned", content
        error = task.exception()
        if error is None:
            return as_json_reply(call, task.result())
        if not isinstance(error, Exception):
            raise error  # a simulated crash or an interrupt is not the tool's answer
        if self.lost_replies_unknown and reply_lost(error):
            reply = unknown_reply(call, f"{type(error).__name__}: {error}: the request went "
                                  "out and its answer never came back")
            return reply, "returned", reply.content
        content = {"error": type(error).__name__, "message": str(error)}
        return ToolReply(call.turn_id, call.call_id, "error", content), "returned", content

    def cancel_call(self, call_id: str) -> bool:
        """Cancel one running call (the tool_call target); False when none runs by that id."""
        task = self.live.get(call_id)
        if task is None or task.done():
            return False
        self.cancelled_calls.add(call_id)
        task.cancel()
        return True

    def timeout_for(self, tool: str) -> float:
        """The tool's own timeout if it declared one, else the runner's default."""
        return self.timeouts.get(tool, self.timeout)

    async def _finishes_in_time(self, task: asyncio.Future[Any], limit: float) -> bool:
        """Wait up to ``limit``; on expiry cancel ``task`` and wait until it settled."""
        timer = asyncio.ensure_future(self.clock.sleep(limit))
        try:
            await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            try:
                await settle(task)
            finally:
                _read_error(task)
            raise
        finally:
            timer.cancel()
        if task.done():
            return True
        task.cancel()
        await settle(task)
        return False


def cleaned_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a tool's child process is handed: :data:`CHILD_VARIABLES` and the
    locale's ``LC_*`` of ``environ`` (this process's), nothing else (seed 000 §5).

    >>> cleaned_environment({"PATH": "/bin", "LC_ALL": "C", "OPENAI_API_KEY": "sk-x"})
    {'PATH': '/bin', 'LC_ALL': 'C'}
    """
    source = os.environ if environ is None else environ
    return {name: value for name, value in source.items()
            if name in CHILD_VARIABLES or name.startswith("LC_")}


def cancelled_reply(call: ToolInvocation) -> tuple[ToolReply, Outcome, Any]:
    """A call cancelled by request, once it settled (seed 002 §19.4: a cancelled result)."""
    content = {"status": "cancelled", "error": "CANCELLED",
               "message": f"{call.tool} was cancelled by request and has settled; "
               "its process tree was stopped"}
    return ToolReply(call.turn_id, call.call_id, "cancelled", content), "returned", content


def as_json_reply(call: ToolInvocation, result: Any) -> tuple[ToolReply, Outcome, Any]:
    """The reply to a tool that returned ``result``, holding it as the JSON the log keeps.

    The tool ran, so the outcome is ``returned`` either way. A value JSON cannot
    hold (a set, bytes, NaN) becomes an error reply instead of an exception that
    would leave the call ``execution_started`` and abandon the rest of the batch;
    a value JSON changes (tuples, integer keys) is held as it will read back.

    >>> as_json_reply(ToolInvocation("t", "c", "read", {}), {1: (2,)})[0].content
    {'1': [2]}
    """
    try:
        value = json.loads(_RESULT_ENCODER.encode(result))
    except (TypeError, ValueError, RecursionError) as exc:
        content = {
            "error": "TOOL_RESULT_NOT_JSON",
            "message": f"{call.tool} ran, but what it returned is not JSON ({exc}); "
            "inspect the real state before repeating it",
        }
        return ToolReply(call.turn_id, call.call_id, "error", content), "returned", content
    return ToolReply(call.turn_id, call.call_id, "ok", value), "returned", value


def _read_error(task: asyncio.Future[Any]) -> None:
    """Read what a tool stopped with when the run that waited for it is itself cancelled.

    Nothing is left to report it to (a crash: the tool's clean-up write was refused),
    and asyncio would log an unread error as "Task exception was never retrieved".
    """
    if task.done() and not task.cancelled():
        task.exception()


async def settle(task: asyncio.Future[Any]) -> None:
    """Wait until ``task`` is done, even if the waiter is cancelled meanwhile (J7).

    A cancellation that arrives while waiting is re-raised once the task settled,
    so a resource is never released while the tool still writes to it.
    """
    interrupted = False
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            interrupted = True
    if not task.cancelled():
        # Seen here: the error of a tool stopped on the way out (a timeout, or a crash that
        # cancels the run) has no one left to report to; it is not "never retrieved".
        task.exception()
    if interrupted:
        raise asyncio.CancelledError
