"""A case's thread pools run each task when it is submitted: the case runs one way."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from harness.intercept import PlainEntry
from harness.runner import Case, CaseResult, CrashSpec
from harness.runner._determinism import run_case_twice

from .conftest import TOOLS, AgentPackages
from .test_plain_agent import SOURCE, mail_scenario, run

# Saves in the background, as LangGraph saves a checkpoint, then looks at once. The save
# first hashes its state, in C without the GIL, as sqlite3 steps a statement: a real
# worker lets the submitter run on meanwhile.
BACKGROUND_SAVE = '''
import hashlib
import os
from concurrent.futures import ThreadPoolExecutor


def _save() -> None:
    hashlib.sha256(b"state" * 4_000_000).hexdigest()
    with open("checkpoint.txt", "w") as f:
        f.write("saved")


def main(prompt: str) -> str:
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(_save)
        seen = os.path.exists("checkpoint.txt")
    return "saw the save" if seen else "no save yet"
'''

# A task that fails: its future carries the error, as a worker's would.
FAILING_TASK = '''
from concurrent.futures import ThreadPoolExecutor


def _fail() -> None:
    raise ValueError("the task's own error")


def main(prompt: str) -> str:
    with ThreadPoolExecutor() as pool:
        future = pool.submit(_fail)
        try:
            future.result()
        except ValueError as error:
            return f"caught: {error}"
    return "not caught"
'''

# run_in_executor exists so a blocking call does not stop the loop: its task may wait
# for the loop, which only a real worker thread can do.
WAITS_FOR_THE_LOOP = '''
import asyncio


async def main(prompt: str) -> str:
    loop = asyncio.get_running_loop()

    async def ping() -> str:
        return "pong"

    def blocking() -> str:
        return asyncio.run_coroutine_threadsafe(ping(), loop).result()

    return await loop.run_in_executor(None, blocking)
'''


# LangGraph runs a plain tool in the loop's executor while the loop goes on with its
# checkpoint: the job (hashing in C, without the GIL) must have reached the world first.
EXECUTOR_SAVE = '''
import asyncio
import hashlib
import os


def _save() -> None:
    hashlib.sha256(b"state" * 4_000_000).hexdigest()
    with open("checkpoint.txt", "w") as f:
        f.write("saved")


async def main(prompt: str) -> str:
    saving = asyncio.get_running_loop().run_in_executor(None, _save)
    seen = os.path.exists("checkpoint.txt")
    await saving
    return "saw the save" if seen else "no save yet"
'''

# A job that sleeps gives the loop its turn back: the loop moves the clock meanwhile.
EXECUTOR_SLEEPS = '''
import asyncio
import time


async def main(prompt: str) -> str:
    loop = asyncio.get_running_loop()
    order = []

    def nap() -> None:
        time.sleep(5)
        order.append(("job", time.monotonic()))

    napping = loop.run_in_executor(None, nap)
    await asyncio.sleep(1)
    order.append(("loop", time.monotonic()))
    await napping
    return repr(order)
'''

# LanceDB (CrewAI's memory) and CrewAI's event bus make a loop on the case's thread and run
# it on a daemon thread of their own; the caller waits on run_coroutine_threadsafe, and a
# native thread (LanceDB's Rust runtime) answers through call_soon_threadsafe later.
BACKGROUND_LOOP = '''
import asyncio
import threading
import time


def main(prompt: str) -> str:
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, name="LibraryLoop", daemon=True).start()

    async def work() -> str:
        answer = asyncio.get_running_loop().create_future()

        def native() -> None:
            time.sleep(0.05)
            loop.call_soon_threadsafe(answer.set_result, "answered")

        threading.Thread(target=native, daemon=True).start()
        await asyncio.sleep(0.01)
        return await answer

    return asyncio.run_coroutine_threadsafe(work(), loop).result(timeout=5)
'''


def _answer(result: CaseResult) -> str:
    assert result.trace is not None
    return str(result.trace.extra.final_answer)


def _run(agent_packages: AgentPackages, source: str) -> CaseResult:
    package = agent_packages.write({"tools": TOOLS, "agent": source})
    scenario = mail_scenario(package, model=[{"turn": 1, "text": "Done."}],
                             expect={"stop_state": "complete"})
    return run(package, scenario)


def test_a_background_save_is_on_disk_before_the_submitter_goes_on(
        agent_packages: AgentPackages) -> None:
    results = [_run(agent_packages, BACKGROUND_SAVE) for _ in range(3)]
    assert all("saw the save" in _answer(r) for r in results), [_answer(r) for r in results]
    assert len({r.digest for r in results}) == 1


def test_the_loops_executor_job_runs_before_the_loop_goes_on(
        agent_packages: AgentPackages) -> None:
    results = [_run(agent_packages, EXECUTOR_SAVE) for _ in range(3)]
    assert all("saw the save" in _answer(r) for r in results), [_answer(r) for r in results]
    assert len({r.digest for r in results}) == 1


def test_an_executor_job_asleep_in_virtual_time_lets_the_loop_go_on(
        agent_packages: AgentPackages) -> None:
    answer = _answer(_run(agent_packages, EXECUTOR_SLEEPS))
    assert answer.endswith("[('loop', 1.0), ('job', 5.0)]"), answer


def test_a_librarys_loop_on_a_daemon_thread_of_its_own_runs_on_real_time(
        agent_packages: AgentPackages) -> None:
    # Was: the loop, made on the case's thread, was a virtual one; idle on its daemon
    # thread it raised VirtualDeadlockError, and the agent waited for it until killed.
    results = [_run(agent_packages, BACKGROUND_LOOP) for _ in range(2)]
    assert all(_answer(r).endswith("answered") for r in results), [_answer(r) for r in results]
    assert len({r.digest for r in results}) == 1


def test_a_failing_task_hands_its_error_to_its_future(agent_packages: AgentPackages) -> None:
    assert "caught: the task's own error" in _answer(_run(agent_packages, FAILING_TASK))


def test_the_loops_executor_still_runs_beside_the_loop(agent_packages: AgentPackages) -> None:
    assert "pong" in _answer(_run(agent_packages, WAITS_FOR_THE_LOOP))


def test_the_pool_is_itself_again_outside_the_case(openai_agent: Callable[..., str]) -> None:
    import threading
    from concurrent.futures import ThreadPoolExecutor

    run(openai_agent(), mail_scenario(openai_agent()))
    with ThreadPoolExecutor(max_workers=1) as pool:
        ran_in = pool.submit(threading.get_ident).result()
    assert ran_in != threading.get_ident()


# LanceDB (CrewAI's memory) writes its tables from Rust, past the case's files, onto the
# real disk, read-only in a sealed worker: the error it raises, as its binding words it.
NATIVE_WRITE_REFUSED = '''
def main(prompt: str) -> str:
    raise OSError("Unable to created lance dataset at /root/.local/share/agent/memory: "
                  "Read-only file system (os error 30)")
'''


def test_an_agent_stopped_by_the_read_only_real_disk_proves_nothing(
        agent_packages: AgentPackages) -> None:
    # Was: a failed case, I4 "stopped 'failed', expected 'complete'", blaming the agent.
    package = agent_packages.write({"tools": TOOLS, "agent": NATIVE_WRITE_REFUSED})
    scenario = mail_scenario(package, model=[{"turn": 1, "text": "Done."}],
                             expect={"stop_state": "complete"})
    result = run(package, scenario)
    assert result.status == "unknown", result.failed_verdicts
    assert "write the real disk refused" in result.unknown_reason
    assert "memory=False" in result.unknown_reason
    twice = run_case_twice(Case("mail", SOURCE, 4, agent=f"{package}.agent:main"),
                           scenario, PlainEntry(f"{package}.agent:main"))
    assert twice.status == "unknown", twice.failed_verdicts


# AutoGen runs each tool call in a task of its own and gathers them: the crash lands in
# the task, whose exception the dead process never retrieves.
TOOL_IN_A_TASK = '''
import asyncio

from {package}.tools import send_mail


async def main(prompt: str) -> str:
    task = asyncio.get_running_loop().create_task(
        asyncio.to_thread(send_mail, to="cfo@example.com", body="inv 7"))
    await asyncio.wait([task])
    return "Sent."
'''


def test_a_crashed_tasks_exception_is_not_logged_into_a_later_case(
        agent_packages: AgentPackages, caplog: pytest.LogCaptureFixture) -> None:
    # Was: "Task exception was never retrieved ... SimulatedCrash" logged when the task was
    # collected, in the output of whichever case the worker ran next (one with no crash).
    import gc

    package = agent_packages.write({"tools": TOOLS, "agent": TOOL_IN_A_TASK})
    scenario = mail_scenario(package, model=[{"turn": 1, "text": "Done."}],
                             expect={"stop_state": "complete"})
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        crashed = run(package, scenario, CrashSpec("after_tool:mail#1", "at", "process_killed"))
        gc.collect()
    assert crashed.crash_reached
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()], \
        [r.getMessage() for r in caplog.records]
