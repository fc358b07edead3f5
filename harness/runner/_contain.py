"""Run cases in worker processes the harness can kill: a misbehaving agent is one failed case.

The agent under test runs in the harness's own process only at its peril: an
agent that calls ``sys.exit``, ``os._exit``, busy-loops or blocks in a real
``time.sleep`` would end or hang the whole run. :func:`run_contained` hands each
case to a worker process and judges it from outside:

- the worker only runs the case; it sends back the trace as JSON and the harness
  gives the verdicts in its own process (:mod:`harness.runner._handback`), so an
  agent that changes the harness's modules in its worker changes no verdict;
- the agent's stdout and stderr (file descriptors 1 and 2) go to a pipe the harness
  reads, kept per case (:mod:`harness.runner._agent_output`), never into the run's
  own output;

- a case that takes longer than ``timeout`` seconds of real time is killed (its own
  time: what it waited for a CPU on a loaded machine does not count, _own_time)
  (with the worker's whole process group) and fails with that reason; the
  virtual clock inside the case is untouched, so this guard never reaches a trace;
- ``sys.exit`` in the agent fails its case, and a worker that dies (``os._exit``,
  a signal) fails the case it held; a fresh worker takes the next case;
- a case past a harness limit (:class:`fakes.HarnessLimitExceeded`: more crash-disk
  bytes or model requests than a case may have) fails with a ``harness_limit`` verdict
  (``limit_result``, which ``run_case`` itself already returns);
- the agent cannot leave processes behind: the worker is a child subreaper (Linux),
  so what its cases started, even a child that left its session (``setsid``), stays
  its descendant, and every descendant is killed when a case ends (agent code cannot
  start a process, :mod:`harness.intercept._processes`, but native code can); a worker
  that dies hands its orphans to the harness, which adopts them while it runs cases
  (:func:`~harness.runner._worker_process.adopting`) and kills them;
- a worker that holds more than ``memory_mib`` MiB (its resident set, watched from
  here) or a case that writes more than :data:`OUTPUT_CAP_BYTES` to its stdout and
  stderr is stopped with a ``harness_limit`` verdict naming the cap;
- workers die with the harness: on Linux the kernel kills them when their parent
  goes (``PR_SET_PDEATHSIG``), and a worker whose parent changed exits; a harness
  stopped by a signal (:mod:`harness.runner._interrupt`) kills them before it returns, and
  takes the signal only between results, never while it hands one to ``on_result``.

Example::

    results = run_contained([(case, scenario)], agent=AgentChoice(), workers=2, timeout=60.0)
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Any

from fakes import HarnessLimitExceeded
from harness._options import DEFAULT_CASE_MEMORY_MIB, DEFAULT_CASE_TIMEOUT
from harness.runner._agent_choice import AgentChoice
from harness.runner._agent_output import (
    OUTPUT_CAP_BYTES,
    OutputTail,
    drain,
    flush_output,
    send_output_to,
)
from harness.runner._handback import (
    MAX_HANDBACK_BYTES,
    contained_failure,
    handback,
    judge_handback,
)
from harness.runner._interrupt import critical, reset_in_child
from harness.runner._ledger_pipe import HarnessLedger, install
from harness.runner._own_time import OwnTime
from harness.runner._results import Case, CaseResult
from harness.runner._worker_process import (
    Sweep,
    adopting,
    die_with_parent,
    end_descendants,
    kill_tree,
    process_context,
    resident_mib,
)

if TYPE_CHECKING:
    from harness.scenario import Scenario

# How often the harness looks at its workers' memory while they run (real seconds).
_MEMORY_POLL_SECONDS = 0.1

Job = tuple[Case, "Scenario"]


def usable_cores() -> int:
    """The cores this process may run on (its affinity), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def worker_count(jobs: int, cases: int) -> int:
    """``--jobs`` capped by the cases to run and the cores to run them on.

    >>> worker_count(10_000, 1)
    1
    """
    return max(1, min(jobs, cases, usable_cores()))


# -- the worker side ----------------------------------------------------------------------


def tool_env_names(scenarios: Iterable[Scenario]) -> tuple[str, ...]:
    """The variables the scenarios' subprocess tools pass to their children: the only ones
    of the harness's environment beyond the agent's allow-list a worker keeps."""
    names: dict[str, None] = {}
    for scenario in scenarios:
        for tool in scenario.tools.values():
            names.update(dict.fromkeys(getattr(tool.behaviour, "env", None) or ()))
    return tuple(names)


def _serve(conn: Connection, output: Connection, parent: int, agent: AgentChoice,
           tool_names: tuple[str, ...] = ()) -> None:
    """The worker's loop: take a case, run it, send its trace; stop on ``None`` or EOF."""
    from harness._environment import become_guest

    die_with_parent(parent)
    become_guest(tool_names)  # before any agent code: the harness's secrets stay with it
    reset_in_child()  # the harness's stop handlers are not the agent's
    os.setpgrp()  # so a timeout kills the agent's own children too
    _sealed()
    send_output_to(output.fileno())
    output.close()
    witness = install(conn)  # each effect a case applies is told to the harness (_ledger_pipe)
    assert witness is not None
    _forget_recordings()
    if agent.prices:
        from fakes import use_prices

        use_prices(dict(agent.prices))
    _import_once(agent)
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        case, scenario = job
        witness.begin_case()
        message = handback(case, scenario, agent)
        end_descendants()  # nothing the case started outlives it
        flush_output()  # what the case printed is in the pipe before its result is sent
        with witness.case_ended():
            conn.send_bytes(message)


def _forget_recordings() -> None:
    """Drop the recorded runs this worker was forked with (a test's own ``run_case``, in
    the process that forks the plugin's worker): their worlds told no harness of their
    effects, so no case here may be built from them."""
    from harness.runner import _explore

    _explore._RECORDINGS.clear()
    _explore._MADE.clear()


def _sealed() -> None:
    """Seal the worker off by the kernel (:mod:`harness.runner._seal`), or say why not."""
    from harness.runner._seal import seal_worker

    refused = seal_worker()
    if refused is not None:
        root = (" and, run by root, the harness's own environment (its secrets) through its "
                "/proc" if os.getuid() == 0 else "")
        print(f"harness: a case worker runs unsealed: {refused}; an agent's C code (ctypes, "
              f"a C extension) can reach the real disk and network{root}", file=sys.stderr)


def _import_once(agent: AgentChoice) -> None:
    """Import the agent and its libraries before the first case, as planning did in its own
    process: what a framework does once per process at import (a price list fetched,
    telemetry) never lands in whichever case runs first. What fails here fails again in
    the case, which reports it."""
    from harness.intercept import PlainEntry, provider_environment

    with contextlib.suppress(BaseException):
        loaded = agent.load()
        if isinstance(loaded, PlainEntry):
            with provider_environment():
                loaded.load()


# -- the harness side ---------------------------------------------------------------------


@dataclass
class _Worker:
    process: BaseProcess
    conn: Connection
    output: Connection  # the read end of the worker's stdout and stderr
    job: int | None = None
    # The job's own time so far (harness.runner._own_time): the load does not count.
    own: OwnTime | None = None
    tail: OutputTail | None = None  # the output of the job it holds
    output_open: bool = True
    memory_read_at: float = 0.0  # when its resident set was last read (monotonic seconds)
    # The effects its cases' worlds told, as they happened: the ledger a verdict trusts.
    ledger: HarnessLedger = field(default_factory=HarnessLedger)


def _start(agent: AgentChoice, tool_names: tuple[str, ...] = ()) -> _Worker:
    ours, theirs = process_context().Pipe()
    output, written = process_context().Pipe(duplex=False)
    process = process_context().Process(target=_serve,
                                 args=(theirs, written, os.getpid(), agent, tool_names),
                                 daemon=True, name="harness-case-worker")
    process.start()
    theirs.close()
    written.close()
    os.set_blocking(output.fileno(), False)
    return _Worker(process, ours, output)


def _kill(worker: _Worker) -> None:
    kill_tree(worker.process.pid)
    worker.process.join()
    # Now, not when the collector finds it: its finalizer closes pipe ends with os.close,
    # which a case's fake file system would refuse if it were active then.
    worker.process.close()
    worker.conn.close()
    worker.output.close()


def _unreadable(process: BaseProcess) -> str:
    process.join(timeout=0.5)  # a pipe that broke as the worker died
    if process.exitcode is not None:
        return _death(process)
    return ("the case's worker sent back a message the harness cannot read (more than "
            f"{MAX_HANDBACK_BYTES // 2**20} MiB, or not one of its messages)")


def _death(process: BaseProcess) -> str:
    process.join(timeout=5)  # its pipe may close a moment before it can be reaped
    code = process.exitcode
    if code is not None and code < 0:
        return f"the agent's worker process was killed by signal {signal.Signals(-code).name}"
    return f"the agent's worker process exited with code {code} in the middle of the case"


class _Pool:
    """Workers, the jobs they hold, and the results that came back."""

    def __init__(self, jobs: Sequence[Job], agent: AgentChoice, timeout: float,
                 on_result: Callable[[CaseResult], object],
                 memory_mib: int = DEFAULT_CASE_MEMORY_MIB) -> None:
        self.jobs, self.agent, self.timeout, self.on_result = jobs, agent, timeout, on_result
        self.memory_mib = memory_mib
        self.longer = "raise --case-timeout if it is honest work"  # how to give more time
        # Whether a worker with no job left waits for more (SealedCases) or is told to stop.
        self.keep_idle = False
        self.results: list[CaseResult | None] = [None] * len(jobs)
        self.next_job = 0
        self.workers: list[_Worker] = []
        self.tool_names = tool_env_names(scenario for _, scenario in jobs)
        # What a dead worker's case started comes to the harness (adopting): ended here.
        self.sweep: Sweep = lambda _keep: 0

    def start(self) -> _Worker:
        """A fresh worker, in the pool."""
        worker = _start(self.agent, self.tool_names)
        self.workers.append(worker)
        return worker

    def give(self, worker: _Worker) -> None:
        """Hand ``worker`` the next job, or stop it when none is left."""
        if self.next_job >= len(self.jobs):
            if not self.keep_idle:
                worker.conn.send(None)
            worker.job = None
            return
        index = self.next_job
        self.next_job += 1
        worker.job, worker.own = index, OwnTime(worker.process.pid)
        worker.tail = OutputTail()
        worker.conn.send(self.jobs[index])

    def finish(self, worker: _Worker, result: CaseResult) -> None:
        """Record ``worker``'s job's result, with what the agent wrote while it ran."""
        assert worker.job is not None
        self.read_output(worker)  # written before the result was sent: already in the pipe
        if worker.tail is not None:
            secrets = self.jobs[worker.job][1].secret_values()
            result = replace(result, output=worker.tail.take(secrets))
        self.results[worker.job] = result
        worker.job, worker.tail = None, None
        self.on_result(result)

    def read_output(self, worker: _Worker) -> None:
        """Keep what the worker wrote for the job it holds (an idle worker's: dropped)."""
        if worker.output_open:
            worker.output_open = drain(worker.output.fileno(), worker.tail)

    def replace(self, worker: _Worker, reason: str | HarnessLimitExceeded) -> None:
        """Fail ``worker``'s job with ``reason`` (a harness limit: its verdict), kill it,
        and start another in its place."""
        from harness.runner._run import limit_result

        assert worker.job is not None
        case = self.jobs[worker.job][0]
        if isinstance(reason, HarnessLimitExceeded):
            self.finish(worker, limit_result(case, reason))
        else:
            self.finish(worker, contained_failure(case, reason))
        _kill(worker)
        self.workers.remove(worker)
        self.sweep([w.process.pid for w in self.workers if w.process.pid is not None])
        if self.next_job < len(self.jobs):
            self.give(self.start())

    def step(self) -> None:
        """Wait for a result, a death or the nearest deadline, and deal with it."""
        busy = [w for w in self.workers if w.job is not None]
        # Own time never runs ahead of real time: waiting for what is left in real time
        # never overshoots a limit.
        nearest = min([self._left_at_least(w) for w in busy] + [_MEMORY_POLL_SECONDS])
        waited: list[Any] = [w.conn for w in busy] + [w.process.sentinel for w in busy]
        waited += [w.output for w in self.workers if w.output_open]
        ready = wait(waited, timeout=max(0.0, nearest))
        with critical():  # a result received is recorded before a stop signal is taken
            self._handle(busy, ready)

    def _handle(self, busy: list[_Worker], ready: list[Any]) -> None:
        for worker in self.workers:
            if worker.output in ready:
                self.read_output(worker)
        for worker in busy:
            # A message waits: its memory is read only when due (an effect told is answered
            # at once, many a second); a case's result has it read in _receive.
            over = self._over_a_cap(worker, when_due=worker.conn in ready)
            if worker.conn in ready and over is None:
                self._receive(worker)
            elif over is not None:
                self.replace(worker, over)
            elif worker.process.sentinel in ready:
                self.replace(worker, _death(worker.process))
            elif self._left(worker) <= 0 and not worker.conn.poll():
                self.replace(worker, f"the case took more than {self.timeout:g} s of real "
                             "time (a busy loop or a blocking call in the agent?) and was "
                             f"killed; {self.longer}")

    def _left(self, worker: _Worker) -> float:
        """What is left of ``worker``'s job's time, in its own seconds (not waiting for a CPU)."""
        assert worker.own is not None
        return self.timeout - worker.own.seconds()

    def _left_at_least(self, worker: _Worker) -> float:
        """:meth:`_left`, or less where that is far from the limit: own time never runs
        ahead of real time, and real time is read without asking ``/proc``."""
        assert worker.own is not None
        at_least = self.timeout - worker.own.real_seconds()
        return at_least if at_least > _MEMORY_POLL_SECONDS else self._left(worker)

    def _over_a_cap(self, worker: _Worker, *, when_due: bool = False
                    ) -> HarnessLimitExceeded | None:
        """The cap ``worker``'s case went past (its memory, its output), if any;
        ``when_due``: its memory only if not read in the last poll interval."""
        written = worker.tail.written if worker.tail is not None else 0
        if written > OUTPUT_CAP_BYTES:
            return HarnessLimitExceeded("output", (
                f"the agent wrote more than the output cap of {OUTPUT_CAP_BYTES // 2**20} MiB "
                f"to its stdout and stderr ({written:,} bytes)"))
        now = time.monotonic()
        if when_due and now - worker.memory_read_at < _MEMORY_POLL_SECONDS:
            return None
        worker.memory_read_at = now
        held = resident_mib(worker.process.pid)
        if held > self.memory_mib:
            return HarnessLimitExceeded("memory", (
                f"the agent exceeded the memory cap of {self.memory_mib} MiB (its worker "
                f"held {held} MiB)"))
        return None

    def _receive(self, worker: _Worker) -> None:
        """Judge the trace ``worker`` sent back, here, where no agent code runs; or answer
        an effect one of its case's tools tells, or keep a request or a move of the clock
        its case's world tells (:mod:`harness.runner._ledger_pipe`)."""
        assert worker.job is not None
        for _ in range(_TOLD_PER_ROUND):
            try:
                message = worker.conn.recv_bytes(MAX_HANDBACK_BYTES)
            except EOFError:
                self.replace(worker, _death(worker.process))
                return
            except OSError:  # too long, or a broken pipe
                self.replace(worker, _unreadable(worker.process))
                return
            if not HarnessLedger.speaks(message):
                break
            answer = worker.ledger.take(message)
            if answer is not None:  # an effect told as it happens: answered now
                with contextlib.suppress(OSError):  # it died meanwhile: its sentinel says so
                    worker.conn.send_bytes(answer)
                return
            # Told, not answered (a request, a move of the clock): the next is often
            # there already, and is taken in this round of the loop, not the next.
            if not worker.conn.poll(0):
                return
        else:
            return
        over = self._over_a_cap(worker)
        if over is not None:  # its memory, read now: a result is never taken past a cap
            self.replace(worker, over)
            return
        case, scenario = self.jobs[worker.job]
        self.finish(worker, judge_handback(case, scenario, message, worker.ledger))
        self.give(worker)


#: The most messages one worker's world tells that :meth:`_Pool._receive` takes in one round
#: of the pool's loop: the others' wait no longer than that.
_TOLD_PER_ROUND = 64


def run_contained(jobs: Sequence[Job], *, agent: AgentChoice, workers: int,
                  timeout: float = DEFAULT_CASE_TIMEOUT,
                  on_result: Callable[[CaseResult], object] = print,
                  memory_mib: int = DEFAULT_CASE_MEMORY_MIB,
                  ) -> list[CaseResult]:
    """Run every job in ``workers`` processes; results in job order (see the module docstring).

    ``agent`` is the ``--agent`` spec each worker imports for itself; ``on_result``
    is called with each result as it arrives (a progress bar; by default it prints).
    """
    from harness.runner._guest import warm

    warm()  # before the first fork: no worker pays for the harness's own imports
    pool = _Pool(jobs, agent, timeout, on_result, memory_mib)
    with adopting() as pool.sweep:
        try:
            for _ in range(worker_count(workers, len(jobs))):
                pool.give(pool.start())
            while any(w.job is not None for w in pool.workers):
                pool.step()
        finally:
            with critical():
                for worker in pool.workers:
                    _kill(worker)
    return [result for result in pool.results if result is not None]


class SealedCases:
    """Cases run one at a time, each in the sealed worker :func:`run_contained` uses, that
    worker kept from one case to the next (the pytest plugin: one item, one case).

    Each case is contained and judged exactly as in :func:`run_contained` (the same worker
    loop, limits, handback and judge), so a case's result is the one ``harness run`` gives.
    A worker that dies or is stopped fails its case only; the next case starts a fresh one.
    Call :meth:`close` when done (its worker also dies with this process)::

        cases = SealedCases(AgentChoice())
        result = cases.run(case, scenario)
        cases.close()
    """

    def __init__(self, agent: AgentChoice, *, timeout: float = DEFAULT_CASE_TIMEOUT,
                 memory_mib: int = DEFAULT_CASE_MEMORY_MIB, longer: str = "") -> None:
        self._pool = _Pool([], agent, timeout, lambda _result: None, memory_mib)
        self._pool.keep_idle = True
        if longer:  # how a timed-out case's reason says to give it more time
            self._pool.longer = longer

    def run(self, case: Case, scenario: Scenario) -> CaseResult:
        """``case``'s judged result (see the class docstring)."""
        from harness.runner._guest import warm

        pool = self._pool
        wanted = tool_env_names([scenario])
        if not set(wanted) <= set(pool.tool_names):
            # A worker holds only the variables it was started with: start one with these.
            self.close()
            pool.tool_names = tuple(dict.fromkeys([*pool.tool_names, *wanted]))
        pool.jobs, pool.results, pool.next_job = [(case, scenario)], [None], 0
        while True:
            if pool.workers and not pool.workers[0].process.is_alive():
                self.close()  # it died idle (a thread the last case left): not this case's
            if not pool.workers:
                warm()  # before the fork, as run_contained: the worker's time is the agent's
                pool.start()  # outside adopting: the kept worker is none of its orphans
            with adopting() as pool.sweep:
                try:
                    pool.give(pool.workers[0])
                except OSError:  # it died just now, before taking the case: a fresh one
                    self.close()
                    pool.next_job = 0
                    continue
                while pool.results[0] is None:
                    pool.step()
            return pool.results[0]

    def close(self) -> None:
        """Stop the kept worker, if any (and whatever it started)."""
        for worker in self._pool.workers:
            _kill(worker)
        self._pool.workers.clear()
