"""The world's job runner and cancel schedule for one case (seed 002 §19.4).

:class:`WorldJobs` holds the :class:`fakes.FakeJobRunner` (its jobs outlive
every incarnation of the agent), hands each incarnation a job port when the
scenario declares jobs, and issues the scenario's cancels at their virtual
times through the agent's cancel hook. An agent without a hook gets no cancel,
and the record says so (the cancel checks are then ``unknown``).

Example::

    jobs = WorldJobs(world)
    port = jobs.port(incarnation=1)                 # None when the scenario has no jobs
    outcome = await jobs.beside(agent, 1, agent.run(task))
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine, Mapping
from typing import Any, Protocol, TypeVar

import fakes
from fakes import FakeJobRunner, Incarnations, RunnerJob, RunnerPort, VirtualClock
from harness.ports import CANCEL_STATUSES, CancelAck, CancelRequest
from harness.runner._child_env import unwanted_variables
from harness.scenario import Scenario
from harness.trace import CancelAnswer, CancelRecord, ChildEnvironment, JobRecord

T = TypeVar("T")


class JobsWorld(Protocol):
    """What the jobs need of the world that holds them (the world imports this module,
    so this one names only what it reads)."""

    scenario: Scenario
    clock: VirtualClock
    incarnations: Incarnations

    @property
    def run_id(self) -> str: ...

    def reach(self, event: str) -> None: ...

    def tool_call_ids(self, tool: str) -> list[str]: ...

    def note_child_environment(self, record: ChildEnvironment) -> None: ...


class WorldJobs:
    """Jobs and cancels of one case; see the module docstring."""

    def __init__(self, world: JobsWorld) -> None:
        self._world = world
        self.scenario = world.scenario
        self.runner = FakeJobRunner(world.clock, world.incarnations)
        self.specs = {name: spec.spec() for name, spec in self.scenario.jobs.items()}
        self.cancels: list[CancelRecord] = []
        self._next_cancel = 0
        # Whether an incarnation offered a cancel hook (None: no incarnation was asked).
        self.hook_offered: bool | None = None
        if self.scenario.cancels:
            # Another session's shared job: a session or job cancel must leave it alone.
            self.runner.start_neighbour()
        points = self.scenario.crash.points
        if not isinstance(points, str) and any(p.startswith("after_signal:") for p in points):
            # Only a scenario that lists such a point reaches it: the world events (and so
            # the traces) of every other scenario stay as they were.
            self._signals: dict[str, int] = {}
            self.runner.on_signal = self._signalled
        if any(spec.env is not None for spec in self.specs.values()):
            # Only a job that declares its environment is judged (env:children): the
            # records, and so the traces, of every other scenario stay as they were.
            self.runner.on_start_env = self._started_with

    def _started_with(self, job: RunnerJob, handed: Mapping[str, str] | None) -> None:
        """What the process of ``job`` received: what the agent handed it, or the runner's
        clean environment, with the variables the job declares (seed 000 §5)."""
        declared = job.spec.env or ()
        received = fakes.subprocess_environment(declared, handed)
        record = job.record
        self._world.note_child_environment(ChildEnvironment(
            self.runner.jobs.index(job) + 1, record.tool, record.call_id, record.incarnation,
            handed is not None, unwanted_variables(received, declared)))

    def _signalled(self, tool: str) -> None:
        self._signals[tool] = self._signals.get(tool, 0) + 1
        self._world.reach(f"after_signal:{tool}#{self._signals[tool]}")

    def port(self, incarnation: int) -> RunnerPort | None:
        """The job port of ``incarnation``; None when the scenario declares no jobs."""
        if not self.specs:
            return None
        return self.runner.port(incarnation, self.specs)

    async def beside(self, agent: object, incarnation: int,
                     run: Coroutine[Any, Any, T]) -> T:
        """Await ``run`` while the scenario's cancels are issued to ``agent`` at their times."""
        if self.scenario.cancels:
            self.hook_offered = callable(getattr(agent, "cancel", None))
        if self._next_cancel >= len(self.scenario.cancels):
            return await run
        # A cancel already due (sent to an incarnation that died answering it) reaches the
        # new one before it runs: the requester got no answer, so it asks again.
        try:
            self._issue_due(agent, incarnation)
        except BaseException:
            run.close()  # the incarnation died answering; its run never starts
            raise
        timer = asyncio.ensure_future(self._issue(agent, incarnation))
        running = asyncio.current_task()

        def crashed_in_cancel(done: asyncio.Future[None]) -> None:
            # The agent's cancel hook crashed (a durable write hit the case's crash
            # point): the process is dead, so its run stops here too.
            if not done.cancelled() and done.exception() is not None and running is not None:
                running.cancel()

        timer.add_done_callback(crashed_in_cancel)
        try:
            return await run
        except asyncio.CancelledError:
            if timer.done() and not timer.cancelled() and timer.exception() is not None:
                raise timer.exception() from None  # type: ignore[misc]
            raise
        finally:
            timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await timer

    async def _issue(self, agent: object, incarnation: int) -> None:
        clock = self._world.clock
        while self._next_cancel < len(self.scenario.cancels):
            fault = self.scenario.cancels[self._next_cancel]
            if fault.at_seconds > clock.now():
                await clock.sleep(fault.at_seconds - clock.now())
            self._send_next(agent, incarnation)

    def _issue_due(self, agent: object, incarnation: int) -> None:
        cancels, now = self.scenario.cancels, self._world.clock.now()
        while self._next_cancel < len(cancels) and cancels[self._next_cancel].at_seconds <= now:
            self._send_next(agent, incarnation)

    def _send_next(self, agent: object, incarnation: int) -> None:
        """Send the next cancel (``times`` times); it counts as sent once answered."""
        clock = self._world.clock
        fault = self.scenario.cancels[self._next_cancel]
        index = self._next_cancel
        request = CancelRequest(f"cancel-{index + 1}", fault.target, self._world.run_id,
                                self._ref(fault.target, fault.tool))
        for repeat in range(1, fault.times + 1):
            try:
                status, detail = _send(agent, request)
            except BaseException:
                # The agent died answering: no answer came, so the requester sends the
                # same request again to the next incarnation.
                self.cancels.append(CancelRecord(index, repeat, clock.now(), fault.target,
                                                 request.ref, incarnation, "crashed"))
                raise
            self.cancels.append(CancelRecord(index, repeat, clock.now(), fault.target,
                                             request.ref, incarnation, status, detail))
        self._next_cancel += 1

    def _ref(self, target: str, tool: str | None) -> str | None:
        """What the request names: the newest call or job of ``tool``, by the world's ids."""
        if target == "job":
            jobs = [j.record for j in self.runner.jobs
                    if j.record.tool == tool and j.record.owner_session == self._world.run_id]
            return jobs[-1].job_id if jobs else None
        if target == "tool_call":
            calls = self._world.tool_call_ids(tool) if tool is not None else []
            return calls[-1] if calls else None
        return None

    def records(self) -> tuple[JobRecord, ...]:
        """Every job of the runner as it really went, for the trace."""
        return tuple(map(self.runner.record, self.runner.jobs))


def _send(agent: object, request: CancelRequest) -> tuple[CancelAnswer, str]:
    """The agent's answer as (status, detail); ``no_hook`` when it offers no ``cancel``."""
    hook = getattr(agent, "cancel", None)
    if not callable(hook):
        return "no_hook", "the agent offers no cancel(request) hook"
    try:
        ack = hook(request)
    except Exception as error:  # the agent's failure is evidence, not the harness's
        return "error", f"{type(error).__name__}: {error}"
    if not isinstance(ack, CancelAck):
        return "error", f"cancel() returned {ack!r}, not a harness.ports.CancelAck"
    if ack.status not in CANCEL_STATUSES:  # the trace keeps only the statuses it knows
        return "error", (f"cancel() answered status {ack.status!r}, not one of "
                         f"{', '.join(CANCEL_STATUSES)}")
    return ack.status, ack.detail

