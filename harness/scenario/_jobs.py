"""Background jobs and cancels in a scenario (seed 002 §19.4).

``jobs`` declares tools that run as jobs of the world's job runner
(:class:`fakes.FakeJobRunner`): the model calls them by name like any tool, the
agent starts the job through its job port and waits for it, and the job goes on
running when the agent crashes. Each declaration says how the job behaves and
which runner fault it meets (the process vanishes, TERM is ignored, the runner
cannot be asked after a restart).

``cancels`` are faults on the virtual clock: at ``at_seconds`` the harness calls
the agent's cancel hook with an explicit target, ``times`` times in a row (a
second identical cancel must change nothing)::

    >>> CancelFault(at_seconds=4, target="tool_call", tool="build").times
    1
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Self

from pydantic import Field, model_validator

import fakes
from harness.ports import CancelTarget
from harness.scenario._base import ScenarioModel
from harness.scenario._faults import Count, Seconds
from harness.scenario._names import TOOL_NAME_PATTERN
from harness.scenario._problems import Problem, did_you_mean, raise_if_any

ToolName = Annotated[str, Field(pattern=TOOL_NAME_PATTERN)]
ExitCode = Annotated[int, Field(ge=0, le=255)]

#: Targets that name one tool's call or job, and so need ``tool``.
TOOL_TARGETS: frozenset[str] = frozenset({"tool_call", "job"})


class JobDeclaration(ScenarioModel):
    """A tool that runs as a background job of the world's job runner."""

    seconds: Seconds = 10
    """How long the job runs, in virtual seconds."""
    output_lines: Annotated[int, Field(ge=0, le=100_000)] = 10
    """Lines of output it writes, evenly over its run."""
    retained_lines: Count | None = None
    """The runner's output window: older lines are lost (a read reports lossy); absent: all."""
    exit_code: ExitCode = 0
    """The exit code it ends with when left alone."""
    vanishes_at_seconds: Seconds | None = None
    """Fault: the process vanishes this long after its start, with no exit code, its PID reused."""
    ignores_term: bool = False
    """Fault: TERM does nothing; only KILL stops it."""
    unqueryable_after_crash: bool = False
    """Fault: once the agent that started it crashed, the runner cannot be asked about it."""
    timeout_seconds: Seconds | None = None
    """The agent's own limit for waiting on one call of it; absent: the agent's default."""
    env: list[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]] | None = None
    """Environment variables the job's process needs besides PATH, HOME, LANG, TMPDIR and the
    like. Declared (even empty): the world records what the agent hands the job's process
    (``JobPort.start(env=...)``) and env:children judges it (seed 000 §5); absent: not judged."""

    @model_validator(mode="after")
    def _vanishes_while_running(self) -> Self:
        if self.vanishes_at_seconds is not None and self.vanishes_at_seconds >= self.seconds:
            raise_if_any([Problem(("vanishes_at_seconds",), "the job ends before it vanishes",
                                  value=self.vanishes_at_seconds,
                                  got=f"{self.vanishes_at_seconds:g}",
                                  expected=f"less than seconds ({self.seconds:g})",
                                  hint="Lower vanishes_at_seconds or raise seconds")])
        return self

    def spec(self) -> fakes.JobSpec:
        """The fake runner's view of this declaration."""
        return fakes.JobSpec(seconds=self.seconds, output_lines=self.output_lines,
                             retained_lines=self.retained_lines, exit_code=self.exit_code,
                             vanishes_at=self.vanishes_at_seconds,
                             ignores_term=self.ignores_term,
                             unqueryable_after_crash=self.unqueryable_after_crash,
                             env=tuple(self.env) if self.env is not None else None)


class CancelFault(ScenarioModel):
    """A cancel the harness issues at a virtual time, with an explicit target."""

    at_seconds: Seconds
    """When, in virtual seconds from the start of the run."""
    target: CancelTarget
    """attempt, tool_call, turn, job, goal or session (seed 002 §19.4)."""
    tool: ToolName | None = None
    """For tool_call and job: the tool (or job) whose newest running call is cancelled."""
    times: Annotated[int, Field(ge=1, le=5)] = 1
    """How many identical requests are sent in a row; a correct agent acts on the first only."""

    @model_validator(mode="after")
    def _tool_when_needed(self) -> Self:
        needs = self.target in TOOL_TARGETS
        if needs and self.tool is None:
            raise_if_any([Problem(("target",), f"a {self.target} cancel names no tool",
                                  value=self.target, got=self.target,
                                  expected="a 'tool' naming the call or job to cancel",
                                  hint=f"Add tool: NAME beside target: {self.target}")])
        if not needs and self.tool is not None:
            raise_if_any([Problem(("tool",), f"a {self.target} cancel takes no tool",
                                  value=self.tool, got=self.tool,
                                  expected=f"no 'tool' (only {sorted(TOOL_TARGETS)} name one)",
                                  hint="Remove 'tool', or use target: tool_call")])
        return self


def job_problems(tools: Mapping[str, object], jobs: Mapping[str, JobDeclaration],
                 cancels: list[CancelFault], *, has_goal: bool) -> list[Problem]:
    """A job named like a tool, a cancel naming neither a tool nor a job, a goal cancel
    without a goal."""
    problems = [Problem(("cancels", index, "target"), "a goal cancel, and no goal is declared",
                        value=cancel.target, got=cancel.target,
                        expected="a 'goal' block (with its 'verifier') beside the cancel",
                        hint="Declare the goal, or cancel another target")
                for index, cancel in enumerate(cancels)
                if cancel.target == "goal" and not has_goal]
    problems += [Problem(("jobs", name), "a job has the name of a tool", value=name, got=name,
                        expected="a name that 'tools' does not use",
                        hint="Rename the job, or remove the tool of that name", at_key=True)
                for name in jobs if name in tools]
    known = [*tools, *jobs]
    for index, cancel in enumerate(cancels):
        wanted = list(jobs) if cancel.target == "job" else known
        if cancel.tool is None or cancel.tool in wanted:
            continue
        kind = "job" if cancel.target == "job" else "tool or job"
        problems.append(Problem(("cancels", index, "tool"), f"names no declared {kind}",
                                value=cancel.tool, got=cancel.tool,
                                expected=f"one of {sorted(wanted)}",
                                hint=did_you_mean(cancel.tool, wanted) or
                                "Declare it under 'jobs', or use target: tool_call"))
    return problems
