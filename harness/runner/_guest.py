"""Agent code outside a case runs contained too: its import, its planning run, ``points``, ``fuzz``.

Before the first case the harness imports the agent (to check its entry point and its
targets) and runs it once (to find its crash points); ``harness points`` and ``harness
fuzz`` run it as well. In the harness's own process an agent that calls ``sys.exit(0)``
at import would end the command with exit 0 (a green CI), and a loop would hang it.
:func:`contained` runs such work in a forked process with a case's limits, started and
ended as a case's worker is (:mod:`harness.runner._worker_process`): its own process
group, killed with the harness, stopped past ``timeout`` real seconds without a word
from it, past ``memory_mib`` MiB resident or past :data:`OUTPUT_CAP_BYTES` written to its
stdout and stderr (a pipe the harness reads and drops: the agent's prints never mix
into a command's own output); every process it started, even one that left its session
(``setsid``), is ended with it. What it sends back is JSON, never a pickle (the agent
may have written the bytes). Each failure is a :class:`~harness.AgentEntryError`, one
line naming the ``--agent`` spec::

    the agent exited while being imported: it called sys.exit(0) (--agent myagent:main)
    importing the agent took longer than 60 s (a loop or a blocking call at import?) ...

The work says which step it is in with the ``step`` callable it is given; each step
starts the clock again (``fuzz`` takes one step per case it runs)::

    value = contained(lambda step: plan(step), timeout=60.0)
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Final

from harness._errors import AgentEntryError, HarnessError, ScenarioError, WorkerError
from harness.runner._agent_output import (
    OUTPUT_CAP_BYTES,
    OutputTail,
    drain,
    flush_output,
    send_output_to,
)
from harness.runner._own_time import OwnTime
from harness.runner._worker_process import (
    adopting,
    die_with_parent,
    end_descendants,
    kill_tree,
    process_context,
    resident_mib,
)


@dataclass(frozen=True)
class Step:
    """What the contained work is doing, as an exit and a timeout name it."""

    doing: str
    """"the agent exited while {doing}"."""
    named: str
    """"{named} took longer than N s"."""
    hint: str
    ends_a_case: bool = False
    """Whether taking this step ends a case (``fuzz``): what that case started is ended."""


IMPORTING: Final = Step("being imported", "importing the agent",
                        "a loop or a blocking call at import?")
PLANNING: Final = Step("running once to find its crash points",
                       "the agent's run that finds its crash points",
                       "a busy loop or a blocking call in the agent?")
RECORDING: Final = Step("running once to list its points", "the agent's recorded run",
                        "a busy loop or a blocking call in the agent?")
FUZZING: Final = Step("running a fuzz case", "a fuzz case",
                      "a busy loop or a blocking call in the agent?", ends_a_case=True)

StepTo = Callable[[Step], None]
_STEPS: Final = {step.doing: step for step in (IMPORTING, PLANNING, RECORDING, FUZZING)}
#: What the work may send back (a plan, a list of points): far below this.
_MAX_MESSAGE: Final = 256 * 1024 * 1024
# How often the harness looks at the process's memory while it runs (real seconds).
_MEMORY_POLL_SECONDS: Final = 0.1


@dataclass(frozen=True)
class _Limits:
    """A case's limits, and what an error about them says."""

    timeout: float
    memory_mib: int | None
    longer: str
    agent: str | None

    def error(self, message: str, *, timed_out: bool = False) -> AgentEntryError:
        """``message``, naming the agent, and how to give more time when it ran out."""
        named = message + (f" (--agent {self.agent})" if self.agent else "")
        return AgentEntryError(named + (f"; {self.longer}" if timed_out and self.longer
                                        else ""))


def contained(work: Callable[[StepTo], object], *, timeout: float, longer: str = "",
              tool_names: Iterable[str] = (), agent: str | None = None,
              memory_mib: int | None = None) -> Any:
    """``work(step)``'s JSON value, computed in a contained process (module docstring).

    The process keeps none of the harness's environment but the agent's allow-list and the
    variables ``tool_names`` (:func:`harness._environment.become_guest`).

    A :class:`~harness.HarnessError` it raises comes back as a :class:`WorkerError` with
    its lines; an exit, a death, a timeout or a cap passed as an :class:`AgentEntryError`
    naming ``agent`` (the ``--agent`` spec), whose message ends with ``longer`` when the
    time is up (how to give it more). ``memory_mib`` is the cap on its resident memory
    (the commands pass a case's; ``None``: no cap). The process is sealed as a case's
    worker is (:mod:`harness.runner._seal`: the real disk read-only, no network, no
    capability): what the work would write (``fuzz``'s repro and example database) it
    sends back, for the harness to write.
    """

    warm()
    with adopting():  # a guest that dies hands what it started here, to be ended on leaving
        context = process_context()
        ours, theirs = context.Pipe()
        output, written = context.Pipe(duplex=False)
        process = context.Process(target=_guest,
                                  args=(work, theirs, written, os.getpid(), tuple(tool_names)),
                                  daemon=True, name="harness-agent-guest")
        process.start()
        theirs.close()
        written.close()
        os.set_blocking(output.fileno(), False)
        try:
            return _await(process, ours, output, _Limits(timeout, memory_mib, longer, agent))
        finally:
            _stop(process)
            ours.close()
            output.close()


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


def _await(process: Any, conn: Connection, output: Connection, limits: _Limits) -> Any:
    # The guest's own time (harness.runner._own_time): a loaded machine does not count.
    step, own, tail = IMPORTING, OwnTime(process.pid), OutputTail()
    output_open = True
    while True:
        waited: list[Any] = [conn, process.sentinel] + ([output] if output_open else [])
        left = limits.timeout - own.seconds()
        ready = wait(waited, timeout=max(0.0, min(left, _MEMORY_POLL_SECONDS)))
        if output in ready:  # kept only to count: the agent's prints go nowhere
            output_open = drain(output.fileno(), tail)
        _check_caps(process, step, tail, limits)
        if conn in ready:
            try:
                message = json.loads(conn.recv_bytes(_MAX_MESSAGE))
            except (EOFError, OSError, ValueError):
                raise _died(process, step, limits) from None
            if message.get("kind") == "step":
                step = _STEPS.get(str(message.get("doing")), step)
                own = OwnTime(process.pid)
                continue
            return _value(message, step, limits)
        if process.sentinel in ready:
            raise _died(process, step, limits)
        if own.seconds() >= limits.timeout and not conn.poll():
            # Own time, not real time: what it waited for a CPU does not count.
            raise limits.error(f"{step.named} took longer than {limits.timeout:g} s of real "
                               f"time ({step.hint}) and was stopped", timed_out=True)


def _check_caps(process: Any, step: Step, tail: OutputTail, limits: _Limits) -> None:
    """Stop the work past a case's output or memory cap (as a case's worker is stopped)."""
    if tail.written > OUTPUT_CAP_BYTES:
        raise limits.error(f"the agent wrote more than the output cap of "
                           f"{OUTPUT_CAP_BYTES // 2**20} MiB to its stdout and stderr while "
                           f"{step.doing} ({tail.written:,} bytes)")
    held = resident_mib(process.pid) if limits.memory_mib is not None else 0
    if limits.memory_mib is not None and held > limits.memory_mib:
        raise limits.error(f"the agent exceeded the memory cap of {limits.memory_mib} MiB "
                           f"while {step.doing} (its process held {held} MiB)")


def _value(message: dict[str, Any], step: Step, limits: _Limits) -> Any:
    kind = message.get("kind")
    if kind == "value":
        return message.get("value")
    if kind == "error":
        raise WorkerError([str(line) for line in message.get("problems") or []])
    if kind == "exit":
        raise limits.error(f"the agent exited while {step.doing}: it called "
                           f"sys.exit({message.get('code')!r})")
    raise limits.error(f"the agent failed while {step.doing}: {message.get('reason')}")


def _died(process: Any, step: Step, limits: _Limits) -> AgentEntryError:
    # Dead but not yet reaped, its pid is still its own: what is left of its group goes too.
    kill_tree(process.pid)
    process.join(timeout=5)  # its pipe may close a moment before it can be reaped
    code = process.exitcode
    how = (f"its process was killed by signal {signal.Signals(-code).name}"
           if code is not None and code < 0 else f"its process exited with code {code}")
    return limits.error(f"the agent exited while {step.doing}: {how}")


def _stop(process: Any) -> None:
    if process.exitcode is None:  # once reaped, its pid may be another process's
        kill_tree(process.pid)
    process.join()
    process.close()  # its finalizer runs now, not inside a later case's files


# -- the contained side --------------------------------------------------------------------


def _guest(work: Callable[[StepTo], object], conn: Connection, output: Connection,
           parent: int, tool_names: tuple[str, ...] = ()) -> None:
    from harness._environment import become_guest
    from harness.runner._interrupt import reset_in_child
    from harness.runner._seal import leave_host_powers, seal_worker

    die_with_parent(parent)  # a subreaper too: what the agent started stays findable
    become_guest(tool_names)  # before any agent code: the harness's secrets stay with it
    # No power over the harness: its /proc (environ, mem) stays closed even to root's agent;
    # sealed, the agent's C code (at import, too) cannot reach the real disk or network.
    if seal_worker() is not None:
        leave_host_powers()
    reset_in_child()
    os.setpgrp()  # a timeout kills what the agent started too
    send_output_to(output.fileno())  # the agent's prints never reach the command's output
    output.close()

    def step(doing: Step) -> None:
        if doing.ends_a_case:
            end_descendants()
        conn.send_bytes(json.dumps({"kind": "step", "doing": doing.doing}).encode())

    message = _outcome(work, step)
    end_descendants()  # nothing the agent started outlives the work
    flush_output()
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
