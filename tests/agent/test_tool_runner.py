"""The tool runner: timeouts cancel and wait for the tool to settle (J7), on virtual time."""

from __future__ import annotations

import asyncio
import gc
import os
import sys

import pytest

from fakes import Behaviour, CrashDisk, DeadIncarnationError, ToolLedger, VirtualClock, WorldTool
from harness.agent._journal import ToolJournal
from harness.agent._tool_runner import ToolRunner, settle
from harness.ports import ToolInvocation


def _runner(clock: VirtualClock, tools: dict[str, WorldTool], timeout: float = 10.0) -> ToolRunner:
    journal = ToolJournal.open(CrashDisk().view(), "/s/journal.jsonl", run_id="run", clock=clock)
    return ToolRunner(journal, tools, clock=clock, incarnation=1, timeout=timeout)


def _call(tool: str, n: int = 1) -> ToolInvocation:
    return ToolInvocation("turn_1", f"call_{n}", tool, {"text": f"line {n}"})


def test_a_tool_that_ignores_cancellation_is_waited_for() -> None:
    clock = VirtualClock()
    ledger = ToolLedger(clock)
    tool = WorldTool("append", ledger, behaviour=Behaviour("ignores_cancellation", seconds=30))
    reply = clock.run(_runner(clock, {"append": tool}).run(_call("append")))
    assert reply.status == "timeout"
    assert clock.now() == 30.0  # released only when the tool settled, not at 10 s
    assert [e.at for e in ledger.effects] == [30.0]
    assert tool.started == tool.settled == 1


def test_a_hanging_tool_times_out_on_virtual_time(real_waits: list[float | None]) -> None:
    clock = VirtualClock()
    tool = WorldTool("send", ToolLedger(clock), behaviour=Behaviour("hanging"))
    reply = clock.run(_runner(clock, {"send": tool}, timeout=600).run(_call("send")))
    assert (reply.status, clock.now()) == ("timeout", 600.0)
    assert reply.content["error"] == "TOOL_TIMEOUT"
    assert real_waits == []  # ten minutes of timeout, not one real wait
    assert tool.settled == 1


def test_a_failing_tool_returns_an_error_reply_and_a_returned_record() -> None:
    clock = VirtualClock()
    runner = _runner(
        clock, {"send": WorldTool("send", ToolLedger(clock), behaviour=Behaviour("failing"))}
    )
    reply = clock.run(runner.run(_call("send")))
    assert reply.status == "error"
    assert reply.content == {"error": "ToolFailure", "message": "send failed (scripted)"}
    assert runner.journal.executions[0].outcome == "returned"


def test_a_tool_whose_reply_was_lost_after_its_effect_is_answered_unknown() -> None:
    clock = VirtualClock()
    ledger = ToolLedger(clock)
    runner = _runner(clock, {"send": WorldTool("send", ledger,
                                               behaviour=Behaviour("reply_lost"))})
    reply = clock.run(runner.run(_call("send")))
    assert len(ledger.effects) == 1  # the mail went out
    assert reply.status == "unknown"
    assert reply.content["error"] == "TOOL_OUTCOME_UNKNOWN"
    assert "the request went out and its answer never came back" in reply.content["message"]
    assert runner.journal.executions[0].outcome == "returned"


@pytest.mark.parametrize(("error", "status"), [
    (ConnectionResetError("reset"), "unknown"), (TimeoutError("read timed out"), "unknown"),
    (BrokenPipeError("pipe"), "unknown"), (ConnectionRefusedError("refused"), "error"),
    (ValueError("bad"), "error")])
def test_only_an_error_after_the_request_went_out_leaves_the_outcome_unknown(
        error: Exception, status: str) -> None:
    class Raises:
        name, concurrency_safe, idempotent = "send", False, False

        async def run(self, arguments: object, context: object) -> None:
            raise error

    clock = VirtualClock()
    runner = _runner(clock, {"send": Raises()})  # type: ignore[dict-item]
    assert clock.run(runner.run(_call("send"))).status == status


def test_read_as_failed_a_lost_reply_tells_the_model_nothing_happened() -> None:
    clock = VirtualClock()
    journal = ToolJournal.open(CrashDisk().view(), "/s/journal.jsonl", run_id="run", clock=clock)
    tools = {"send": WorldTool("send", ToolLedger(clock), behaviour=Behaviour("reply_lost"))}
    runner = ToolRunner(journal, tools, clock=clock, incarnation=1, lost_replies_unknown=False)
    reply = clock.run(runner.run(_call("send")))
    assert (reply.status, reply.content["error"]) == ("error", "ToolReplyLost")


def test_an_unknown_tool_is_rejected_before_execution() -> None:
    clock = VirtualClock()
    runner = _runner(clock, {})
    reply = clock.run(runner.run(_call("nope")))
    assert reply.status == "not_started"
    assert runner.journal.executions[0].outcome == "rejected_before_execution"


def test_one_sequential_tool_makes_the_batch_sequential() -> None:
    clock = VirtualClock()
    ledger = ToolLedger(clock)
    slow = Behaviour("slow", seconds=2)
    tools = {
        "read": WorldTool("read", ledger, behaviour=slow),
        "append": WorldTool("append", ledger, behaviour=slow),
    }
    clock.run(_runner(clock, tools).run_batch([_call("read", 1), _call("append", 2)]))
    assert clock.now() == 4.0
    clock2 = VirtualClock()
    tools2 = {"read": WorldTool("read", ToolLedger(clock2), behaviour=slow)}
    clock2.run(_runner(clock2, tools2).run_batch([_call("read", 1), _call("read", 2)]))
    assert clock2.now() == 2.0


def test_cancelling_the_runner_still_waits_for_the_tool() -> None:
    clock = VirtualClock()
    tool = WorldTool(
        "append", ToolLedger(clock), behaviour=Behaviour("ignores_cancellation", seconds=5)
    )
    runner = _runner(clock, {"append": tool}, timeout=100)

    async def main() -> float:
        task = asyncio.ensure_future(runner.run(_call("append")))
        await asyncio.sleep(1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return clock.now()

    assert clock.run(main()) == 5.0
    assert tool.settled == 1


def test_settle_reraises_a_cancellation_once_the_task_is_done() -> None:
    clock = VirtualClock()

    async def main() -> None:
        work = asyncio.ensure_future(asyncio.sleep(3))
        waiter = asyncio.ensure_future(settle(work))
        await asyncio.sleep(1)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert work.done()

    clock.run(main())
    assert clock.now() == 3.0


def test_a_subprocess_tool_has_its_process_group_killed_on_timeout(tmp_path) -> None:
    # The child (one process, the group's leader) marks the end of its 30 s: killed on
    # timeout it never gets there, waited for it does; no wall clock is read.
    done = tmp_path / "done"
    clock = VirtualClock()
    child = f"import pathlib, time; time.sleep(30); pathlib.Path({str(done)!r}).touch()"
    tool = WorldTool("append", ToolLedger(clock), behaviour=Behaviour(
        "subprocess", argv=(sys.executable, "-c", child)))
    reply = clock.run(_runner(clock, {"append": tool}, timeout=1).run(_call("append")))
    assert reply.status == "timeout"
    assert not done.exists()
    with pytest.raises(ProcessLookupError):
        os.killpg(tool.pids[0], 0)  # the whole group is gone


def test_a_short_subprocess_tool_completes() -> None:
    clock = VirtualClock()
    ledger = ToolLedger(clock)
    tool = WorldTool("append", ledger, behaviour=Behaviour("subprocess", argv=("true",)))
    from harness.ports import ToolContext

    context = ToolContext(_call("append"), "exec_1", "run", 1, clock)
    assert clock.run(tool.run({"text": "x"}, context)) == {"appended": True, "lines": 1}


def test_a_tool_declared_timeout_overrides_the_runner_default() -> None:
    clock = VirtualClock()
    ledger = ToolLedger(clock)
    tools = {
        "quick_limit": WorldTool("send", ledger, behaviour=Behaviour("hanging")),
        "default_limit": WorldTool("send", ledger, behaviour=Behaviour("hanging")),
    }
    runner = _runner(clock, tools)
    runner.timeouts = {"quick_limit": 2.5}
    reply = clock.run(runner.run(_call("quick_limit")))
    assert reply.status == "timeout"
    assert clock.now() == 2.5
    clock.run(runner.run(_call("default_limit", 2)))
    assert clock.now() == 12.5  # the default 10 s applies to the tool that declared none


class _OddResult:
    """A concurrency-safe tool that takes effect, then returns a value JSON cannot hold."""

    name = "odd"
    concurrency_safe = True
    idempotent = False

    def __init__(self, result: object) -> None:
        self.result = result
        self.ran = 0

    async def run(self, arguments: object, context: object) -> object:
        self.ran += 1
        return self.result


def test_a_result_that_is_not_json_is_an_error_reply_and_never_escapes_the_batch() -> None:
    # The tool ran (its effect happened), so the call is closed as returned, and the
    # model hears what went wrong; a TypeError must not leave execution_started behind
    # or abandon the other calls of the batch.
    clock = VirtualClock()
    odd = _OddResult({"tags": {"a", "b"}})
    tools = {"odd": odd, "read": WorldTool("read", ToolLedger(clock))}
    runner = _runner(clock, tools)  # type: ignore[dict-item]
    replies = clock.run(runner.run_batch([_call("odd", 1), _call("read", 2)]))
    assert [(r.call_id, r.status) for r in replies] == [("call_1", "error"), ("call_2", "ok")]
    assert replies[0].content["error"] == "TOOL_RESULT_NOT_JSON"
    assert odd.ran == 1
    assert [e.outcome for e in runner.journal.executions] == ["returned", "returned"]
    assert runner.halted is None


def test_a_result_is_held_as_the_json_a_restarted_agent_reads_back() -> None:
    # Keys of mixed types cannot be sorted for the result's hash; on the way through
    # the log integer keys become strings and tuples lists. The reply holds that JSON
    # value already, so the hash works and a restarted agent reads the same reply.
    clock = VirtualClock()
    runner = _runner(clock, {"odd": _OddResult({1: ("x", 2), "b": None})})  # type: ignore[dict-item]
    reply = clock.run(runner.run(_call("odd")))
    assert (reply.status, reply.content) == ("ok", {"1": ["x", 2], "b": None})
    assert runner.journal.executions[0].outcome == "returned"


class _CleanUpRefused:
    """A tool whose clean-up write, once it is stopped, is refused: its process crashed."""

    name = "build"
    concurrency_safe = False
    idempotent = False

    async def run(self, arguments: object, context: object) -> object:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            raise DeadIncarnationError("append /state/jobs.jsonl", 1, 1) from None
        return None


def test_a_crash_leaves_no_tool_error_unread() -> None:
    # A crash cancels the run while a tool runs; the tool's error on the way out has no
    # reader left, and asyncio would log it as "Task exception was never retrieved".
    clock = VirtualClock()
    runner = _runner(clock, {"build": _CleanUpRefused()})  # type: ignore[dict-item]
    unread: list[str] = []

    async def crash_while_it_runs() -> None:
        asyncio.get_running_loop().set_exception_handler(
            lambda _loop, context: unread.append(str(context["message"])))
        run = asyncio.ensure_future(runner.run(_call("build")))
        await clock.sleep(1)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    clock.run(crash_while_it_runs())
    gc.collect()
    assert unread == []


@pytest.mark.parametrize(("queue", "ends"), [(True, [2.0, 2.0, 4.0]), (False, [2.0, 2.0, 2.0])])
def test_a_parallel_batch_queues_the_calls_of_one_path(queue: bool, ends: list[float]) -> None:
    # Seed 002 §19.5: edits of notes.md run one after the other; todo.md runs beside.
    clock = VirtualClock()
    ledger = ToolLedger(clock)
    edit = WorldTool("put", ledger, behaviour=Behaviour("slow", seconds=2), concurrency_safe=True)
    runner = _runner(clock, {"edit": edit})
    runner.queue_by_path = queue
    calls = [ToolInvocation("turn_1", f"call_{n}", "edit", {"path": path, "key": f"k{n}"})
             for n, path in enumerate(("notes.md", "todo.md", "./notes.md"), 1)]
    replies = clock.run(runner.run_batch(calls))
    assert [r.call_id for r in replies] == ["call_1", "call_2", "call_3"]  # the model's order
    assert sorted(e.at for e in ledger.effects) == ends


def test_the_report_of_a_lost_reply_sent_again_names_the_failure_not_a_crash() -> None:
    from pathlib import Path

    from harness._report_text import render_failure
    from harness.mutants import MUTANTS, Kill
    from harness.mutants._run import run_kill
    from harness.scenario import load_scenario

    scenario = "scenarios/tools/mail-reply-lost.yaml"
    mutant = next(m for m in MUTANTS if m.name == "J5-lost-reply-read-as-failed")
    report = render_failure(run_kill(Kill(scenario, "I1"), mutant.factory),
                            load_scenario(Path(scenario)))
    assert ("send_mail ran 2 times with the same arguments in one run, no restart between: "
            "send_mail #1 failed after its request went out") in report
    assert "the crash at" not in report
