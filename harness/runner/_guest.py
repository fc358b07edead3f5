"""Agent code outside a case runs contained too: its import, its planning run, ``points``, ``fuzz``.

Before the first case the harness imports the agent (to check its entry point and its
targets) and runs it once (to find its crash points); ``harness points`` and ``harness
fuzz`` run it as well. In the harness's own process an agent that calls ``sys.exit(0)``
at import would end the command with exit 0 (a green CI), and a loop would hang it.
:func:`contained` runs such work in a forked process, like a case's worker: its own
process group, killed with the harness, and stopped past ``timeout`` real seconds
without a word from it. What it sends back is JSON, never a pickle (the agent may have
written the bytes). Each failure is a :class:`~harness.AgentEntryError`, one line::

    the agent exited while being imported: it called sys.exit(0)
    importing the agent took longer than 60 s (a loop or a blocking call at import?) ...

The work says which step it is in with the ``step`` callable it is given; each step
starts the clock again (``fuzz`` takes one step per case it runs)::

    value = contained(lambda step: plan(step), timeout=60.0)
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Final

from harness._errors import AgentEntryError, HarnessError, ScenarioError, WorkerError
from harness.runner._own_time import OwnTime
from harness.runner._worker_process import die_with_parent, process_context


@dataclass(frozen=True)
class Step:
    """What the contained work is doing, as an exit and a timeout name it."""

    doing: str
    """"the agent exited while {doing}"."""
    named: str
    """"{named} took longer than N s"."""
    hint: str


IMPORTING: Final = Step("being imported", "importing the agent",
                        "a loop or a blocking call at import?")
PLANNING: Final = Step("running once to find its crash points",
                       "the agent's run that finds its crash points",
                       "a busy loop or a blocking call in the agent?")
RECORDING: Final = Step("running once to list its points", "the agent's recorded run",
                        "a busy loop or a blocking call in the agent?")
FUZZING: Final = Step("running a fuzz case", "a fuzz case",
                      "a busy loop or a blocking call in the agent?")

StepTo = Callable[[Step], None]
_STEPS: Final = {step.doing: step for step in (IMPORTING, PLANNING, RECORDING, FUZZING)}
#: What the work may send back (a plan, a list of points): far below this.
_MAX_MESSAGE: Final = 256 * 1024 * 1024


def contained(work: Callable[[StepTo], object], *, timeout: float, longer: str = "",
              tool_names: Iterable[str] = ()) -> Any:
    """``work(step)``'s JSON value, computed in a contained process (module docstring).

    The process keeps none of the harness's environment but the agent's allow-list and the
    variables ``tool_names`` (:func:`harness._environment.become_guest`).

    A :class:`~harness.HarnessError` it raises comes back as a :class:`WorkerError` with
    its lines; an exit, a death or a timeout as an :class:`AgentEntryError`, whose
    message ends with ``longer`` when the time is up (how to give it more).
    """

    warm()
    context = process_context()
    ours, theirs = context.Pipe()
    process = context.Process(target=_guest, args=(work, theirs, os.getpid(), tuple(tool_names)),
                              daemon=True,
                              name="harness-agent-guest")
    process.start()
    theirs.close()
    try:
        return _await(process, ours, timeout, longer)
    finally:
        _stop(process)
        ours.close()


_WARMING: Final = {
    "name": "warming", "dialect": "openai", "model": [{"turn": 1, "text": "Hi."}],
    "expect": {"stop_state": "complete"},
}
_warm: list[bool] = []


def warm() -> None:
    """Import here, once, what the harness needs around the agent's code: the runner, what
    intercepting the agent's network imports (httpx, aiohttp, urllib3) and what a case
    imports (a reference agent's case is run and judged). The agent's import and planning
    used to give this to every worker forked after them; now no agent code runs here, this
    does, so a worker's time limit is the agent's alone."""
    if _warm:
        return
    from harness.intercept import provider_environment
    from harness.runner import Case, run_case
    from harness.runner._handback import judge_handback, sendable  # noqa: F401
    from harness.scenario import Scenario

    with provider_environment():
        pass
    scenario = Scenario.model_validate(_WARMING)
    run_case(Case(scenario.name, Path("<warming>"), 0), scenario)
    _warm.append(True)


def _await(process: Any, conn: Connection, timeout: float, longer: str) -> Any:
    # The guest's own time (harness.runner._own_time): a loaded machine does not count.
    step, own = IMPORTING, OwnTime(process.pid)
    while True:
        ready = wait([conn, process.sentinel], timeout=max(0.0, timeout - own.seconds()))
        if conn in ready:
            try:
                message = json.loads(conn.recv_bytes(_MAX_MESSAGE))
            except (EOFError, OSError, ValueError):
                raise _died(process, step) from None
            if message.get("kind") == "step":
                step = _STEPS.get(str(message.get("doing")), step)
                own = OwnTime(process.pid)
                continue
            return _value(message, step)
        if process.sentinel in ready:
            raise _died(process, step)
        if not ready and own.seconds() < timeout:
            continue  # it waited for a CPU meanwhile: that time is not its own
        if not ready:
            raise AgentEntryError(f"{step.named} took longer than {timeout:g} s of real time "
                                  f"({step.hint}) and was stopped" + (longer and f"; {longer}"))


def _value(message: dict[str, Any], step: Step) -> Any:
    kind = message.get("kind")
    if kind == "value":
        return message.get("value")
    if kind == "error":
        raise WorkerError([str(line) for line in message.get("problems") or []])
    if kind == "exit":
        raise AgentEntryError(f"the agent exited while {step.doing}: it called "
                              f"sys.exit({message.get('code')!r})")
    raise AgentEntryError(f"the agent failed while {step.doing}: {message.get('reason')}")


def _died(process: Any, step: Step) -> AgentEntryError:
    process.join(timeout=5)  # its pipe may close a moment before it can be reaped
    code = process.exitcode
    how = (f"its process was killed by signal {signal.Signals(-code).name}"
           if code is not None and code < 0 else f"its process exited with code {code}")
    return AgentEntryError(f"the agent exited while {step.doing}: {how}")


def _stop(process: Any) -> None:
    pid = process.pid
    if pid is not None and process.exitcode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    process.join()


# -- the contained side --------------------------------------------------------------------


def _guest(work: Callable[[StepTo], object], conn: Connection, parent: int,
           tool_names: tuple[str, ...] = ()) -> None:
    from harness._environment import become_guest
    from harness.runner._interrupt import reset_in_child

    die_with_parent(parent)
    become_guest(tool_names)  # before any agent code: the harness's secrets stay with it
    reset_in_child()
    os.setpgrp()  # a timeout kills what the agent started too

    def step(doing: Step) -> None:
        conn.send_bytes(json.dumps({"kind": "step", "doing": doing.doing}).encode())

    message = _outcome(work, step)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    conn.send_bytes(message)
    conn.close()
    os._exit(0)  # no atexit handler of the parent (a test runner's) runs here


def _outcome(work: Callable[[StepTo], object], step: StepTo) -> bytes:
    try:
        message: dict[str, Any] = {"kind": "value", "value": work(step)}
    except HarnessError as error:
        problems = error.errors if isinstance(error, ScenarioError) else [error]
        message = {"kind": "error", "problems": [str(p) for p in problems]}
    except SystemExit as error:
        message = {"kind": "exit", "code": error.code if isinstance(error.code, int | None)
                   else str(error.code)}
    except BaseException as error:  # whatever the agent raised, said in a line
        message = {"kind": "failure", "reason": f"{type(error).__name__}: {error}"}
    try:
        return json.dumps(message).encode()
    except (TypeError, ValueError) as error:
        return json.dumps({"kind": "failure", "reason": f"unsendable: {error}"}).encode()
