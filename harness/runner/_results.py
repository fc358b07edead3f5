"""What the runner hands to its users: cases, verdicts and results, as plain data.

A :class:`Case` is one scenario run, with or without one injected crash. Running
it gives a :class:`CaseResult`: the stop state, one :class:`Verdict` per
invariant (``pass``, ``fail`` or ``unknown`` — a check whose fault or crash point
was never reached is never ``pass``), the per-attempt rows a report reads, and
a digest of the whole trace (the same seed gives the same digest).
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from harness._redact import known_secrets, redact_values

# The checkers produce verdicts without depending on the runner; the names live here too.
from harness.checks import Verdict, VerdictStatus

if TYPE_CHECKING:
    from harness.trace import Trace

__all__ = ["FAIL_UNREACHED", "AgentOutput", "AttemptRow", "Case", "CaseResult", "CrashSpec",
           "CrashWhen", "Verdict", "VerdictStatus", "strictly", "without_secrets"]

CrashWhen = Literal["before", "after", "at"]
"""Before or after an agent's own persistence point; ``at`` a world event."""


@dataclass(frozen=True)
class CrashSpec:
    """Where to crash: a persistence point, before or after it, leaving a crash class.

    ``during_recovery`` crashes the second incarnation again at the first point it
    reaches while recovering.

    >>> CrashSpec("journal:fsync#3", "after", "unsynced_lost").label
    'journal:fsync#3:after:unsynced_lost'
    """

    point_id: str
    when: CrashWhen
    crash_class: str
    during_recovery: bool = False

    @property
    def label(self) -> str:
        suffix = ":again" if self.during_recovery else ""
        return f"{self.point_id}:{self.when}:{self.crash_class}{suffix}"


#: Where a printed replay command writes its results (``harness run`` writes ``results``).
REPLAY_OUT: Final = "results-replay"


@dataclass(frozen=True)
class Case:
    """One run of one scenario file, with an optional crash."""

    scenario_name: str
    source: Path
    seed: int
    crash: CrashSpec | None = None
    agent: str | None = None
    """The ``--agent`` spec the case ran with (None: the reference agent), for its replay."""
    targets: tuple[tuple[str, str], ...] = ()
    """The ``--target`` pairs it ran with, for its replay."""
    exec: str | None = None
    """The ``--exec`` command the case ran (an agent process), for its replay."""

    @property
    def case_id(self) -> str:
        """A readable, stable id: ``name`` or ``name[point:when:class]``."""
        if self.crash is None:
            return self.scenario_name
        return f"{self.scenario_name}[{self.crash.label}]"

    @property
    def replay_command(self) -> str:
        """One line that re-runs exactly this case."""
        words = ["harness", "run", str(self.source), "--seed", str(self.seed)]
        if self.agent is not None:
            words += ["--agent", self.agent]
        for tool, spec in self.targets:
            words += ["--target", f"{tool}={spec}"]
        if self.exec is not None:
            words += ["--exec", self.exec]
        if self.crash is not None:
            words += ["--crash-at", self.crash.label]
        # A folder of its own: a pasted replay must not overwrite the whole run's results.
        return shlex.join([*words, "--out", REPLAY_OUT])


@dataclass(frozen=True)
class AttemptRow:
    """One request attempt as the provider saw it; the reports read these (DESIGN §7).

    ``input_tokens`` counts every prompt token, cached ones included (as
    ``gen_ai.usage.input_tokens`` does); ``cache_read_tokens`` and the cache
    writes are parts of it. The ``*_version`` fields name the version of each
    prompt segment when the prompt cache is on, so a cache drop can be traced to
    the release that changed it; ``None`` means not reported.
    """

    scenario: str
    case_id: str
    seed: int
    request_index: int
    turn: int
    attempt: int
    model: str
    started_at: float
    first_byte_at: float | None
    ended_at: float | None
    outcome: str
    input_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    output_tokens: int | None
    cache_miss: str | None = None
    retry_layer: str | None = None
    provider: str | None = None
    attempt_id: str | None = None
    cache_write_5m_tokens: int | None = None
    cache_write_1h_tokens: int | None = None
    prompt_version: str | None = None
    tool_list_version: str | None = None
    instructions_version: str | None = None
    compaction_version: str | None = None


@dataclass(frozen=True)
class AgentOutput:
    """What the agent wrote to its stdout and stderr during its case, kept apart from the
    harness's own output: the last bytes it wrote (``tail``, decoded), out of ``written``.

    >>> AgentOutput("done\\n", written=70_000).cut
    True
    """

    tail: str
    written: int
    """Every byte written, the tail's included."""
    kept: int = 0
    """The bytes the tail was decoded from (``written`` when nothing was cut)."""

    @property
    def cut(self) -> bool:
        """Whether earlier output was left out to keep the tail small."""
        return self.written > self.kept


@dataclass(frozen=True)
class CaseResult:
    """The finished run of a :class:`Case`."""

    case: Case
    stop_state: str | None
    stop_reason: str
    verdicts: tuple[Verdict, ...]
    digest: str
    crash_reached: bool
    side_effects: Mapping[str, int] = field(default_factory=dict)
    duplicates: int = 0
    retries: int = 0
    virtual_seconds: float = 0.0
    attempts: tuple[AttemptRow, ...] = ()
    error: str | None = None
    # The evidence behind the verdicts; left out of equality and repr (it is large).
    trace: Trace | None = field(default=None, compare=False, repr=False)
    exploration: str = field(default="replayed", compare=False)
    """How the case ran: ``recorded`` (from a copy of its scenario's recorded run),
    ``rejoined`` (… and stopped once it rejoined it) or ``replayed`` (from its start)."""
    output: AgentOutput | None = field(default=None, compare=False, repr=False)
    """The agent's stdout and stderr while the case ran (contained runs only; ``None``
    when it wrote nothing): shown in its failure report, never in the summary."""

    @property
    def failed_verdicts(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if v.status == "fail")

    @property
    def warnings(self) -> tuple[Verdict, ...]:
        """Findings of the lower severity: they fail the case only under ``--strict``."""
        return tuple(v for v in self.verdicts if v.status == "warn")

    @property
    def unreached_faults(self) -> tuple[str, ...]:
        """The scripted faults no request met: the case proves nothing about them."""
        return tuple(line.removeprefix("never reached: ") for v in self.verdicts
                     if v.invariant == "faults" and v.status == "unknown" for line in v.evidence)

    @property
    def unplayable(self) -> str | None:
        """Why the case's script could not be played to the agent (or None): a scripted
        call its ``--target`` function does not take (the case was not run), or a tool the
        agent offers in no request (the case ran, judging a mismatch)."""
        return next((f"{v.message}; {v.advice}" if v.advice else v.message
                     for v in self.verdicts
                     if v.invariant in UNPLAYABLE and v.status == "unknown"), None)

    @property
    def unknown_reason(self) -> str:
        """Why an ``unknown`` case proves nothing: its script that cannot be played, the
        crash point's verdict (with the points the agent did reach), else the first
        scripted fault never reached."""
        if self.unplayable is not None:
            return self.unplayable
        sealed = self.refused_by_the_seal
        if sealed is not None:
            return sealed
        crash = [v.message for v in self.verdicts
                 if v.invariant == "crash" and v.status == "unknown"]
        if crash:
            return crash[0]
        if self.unreached_faults:
            return f"the fault {self.unreached_faults[0]} was never reached"
        return "the case's crash point was never reached"

    @property
    def refused_by_the_seal(self) -> str | None:
        """Why the agent's stop proves nothing of it (its :data:`SEALED_DISK` verdict), or
        None: it stopped on a write the real disk refused, from code the harness cannot
        give the case's files (a C library's own file I/O)."""
        return next((f"{v.message}; {v.advice}" for v in self.verdicts
                     if v.invariant == SEALED_DISK and v.status == "unknown"), None)

    @property
    def no_crash_case(self) -> str | None:
        """Why this uncrashed case's scenario has no crash case though it asked for some
        (its :data:`NO_CRASH_CASE` verdict), or None."""
        return next((v.message for v in self.verdicts
                     if v.invariant == NO_CRASH_CASE and v.status == "unknown"), None)

    @property
    def passed(self) -> bool:
        """No invariant failed, no harness error, the injected crash and every fault reached."""
        return self.status == "pass"

    @property
    def status(self) -> VerdictStatus:
        """``fail`` (a verdict or the harness failed), ``unknown`` (the crash point or a
        scripted fault was never reached: the case proves nothing), else ``pass``.

        A case that never met its crash or fault is ``unknown`` whatever its checks say:
        the run they judged is not the one the case is about (an agent that resumed an
        earlier case's conversation never reaches them). Only what holds of any run fails
        it still: a harness error, and the verdicts of :data:`FAIL_UNREACHED`.
        """
        unreached = (self.case.crash is not None and not self.crash_reached) \
            or bool(self.unreached_faults) or self.unplayable is not None \
            or self.refused_by_the_seal is not None
        failed = self.failed_verdicts
        if unreached:
            failed = tuple(v for v in failed if v.invariant in FAIL_UNREACHED)
        if self.error is not None or failed:
            return "fail"
        return "unknown" if unreached else "pass"


#: The verdict an uncrashed case carries when its scenario asked for a crash at every point
#: of the agent's own files and the agent reached none: the scenario has no crash case
#: (:func:`harness.runner._case.no_crash_case`).
NO_CRASH_CASE: Final = "crash:cases"

#: The verdict an agent's stop carries when it stopped on "Read-only file system": a write
#: the real disk refused (:func:`harness.runner._case.refused_by_the_seal`).
SEALED_DISK: Final = "sealed_disk"

#: The verdicts whose ``unknown`` says the scenario's script does not fit the agent.
UNPLAYABLE: Final = frozenset({"script", "tools"})

#: Verdicts that judge the agent whatever the run met, so they fail a case even when its
#: crash point or fault was never reached, or its script named a tool the agent does not
#: offer: the harness's own limits, a trace that disagrees with the harness's own ledger,
#: a request to a real host, a tool dropped from the agent's list, another dialect than
#: the scenario's, no stop state, a dead process, two differing runs, and how the agent
#: treats the provider's refusals (a 400, 404 or 422 sent again, a rate limit retried
#: past the cap), which no run makes right.
FAIL_UNREACHED: Final = frozenset({"harness_limit", "judge", "network", "tools", "dialect",
                                   "outcome", "process", "determinism", "S5:4xx", "S5:429"})


def strictly(result: CaseResult) -> CaseResult:
    """``result`` with every warning turned into a failure (``--strict``)."""
    if not result.warnings:
        return result
    verdicts = tuple(replace(v, status="fail") if v.status == "warn" else v
                     for v in result.verdicts)
    return replace(result, verdicts=verdicts)


def without_secrets(result: CaseResult, secrets: Collection[str]) -> CaseResult:
    """``result`` with every secret value the scenario hands a tool, and every one of the
    harness's environment (:func:`harness._redact.known_secrets`), replaced in its texts.

    The stop reason, the error and the verdicts' messages and evidence quote what the
    agent and the world said, arguments included; results, reports and failure text
    are all written from these fields (the trace stays whole, for the checkers only).
    """
    values = known_secrets(secrets)
    if not values:
        return result

    def clean(text: str) -> str:
        return redact_values(text, values)

    verdicts = tuple(replace(v, message=clean(v.message), evidence=tuple(map(clean, v.evidence)),
                             advice=clean(v.advice)) for v in result.verdicts)
    return replace(result, stop_reason=clean(result.stop_reason), verdicts=verdicts,
                   error=None if result.error is None else clean(result.error))
