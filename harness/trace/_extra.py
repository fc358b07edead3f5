"""What a trace says beyond its records: the agent's form, its last words, what it reached.

Each field is read by a checker or by the failure report, and each is ``None`` when
the case had nothing to say there. A ``None`` field is left out of the trace's JSON,
so a trace's canonical JSON (and digest) holds only what the case said: the record
reads as the free-form mapping it replaced did, with every key declared and typed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class RefusedTurn:
    """A request refused before it reached the model (a 400 for tool calls without their
    results), named by the turn it was for and the attempt it would have been.

    Its record keeps turn 0 (it never reached the model: no fault, no world event); the
    failure timeline names it by these instead.
    """

    request: int  # the record's index
    turn: int
    attempt: int


@dataclass(frozen=True)
class NeverStartedCall:
    """A call whose last durable journal record at a restart was its intent (J4)."""

    incarnation: int  # the restart that read the journal
    call_id: str
    tool: str


@dataclass(frozen=True)
class HeldAfterReturn:
    """A run that returned while a worker thread of it still slept (CANCEL:held)."""

    incarnation: int
    returned_at: float
    until: float


@dataclass(frozen=True)
class GoalInRequest:
    """The goal revisions whose objective and every acceptance criterion one request carried
    (I5:context), recorded for a goal scenario under a context window, where compaction runs."""

    request: int  # RequestRecord.index
    revisions: tuple[int, ...]  # empty: the request told the model no revision of the goal


@dataclass(frozen=True)
class ChildEnvironment:
    """The environment one child process of a ``subprocess`` tool, or of a background job
    that declares its environment, received (env:children):
    only the names it should not have had; no value, and not the names every machine
    spells differently (``LANG``, ``TMPDIR``), so the trace stays the same everywhere."""

    seq: int  # InvocationRecord.seq; a background job's place among the runner's jobs
    tool: str
    call_id: str
    incarnation: int
    handed: bool  # the agent handed an environment (else the world's clean one applied)
    # The variables it should not have had, each "NAME: why" (a provider's key or URL, a
    # harness setting, a secret-looking name the scenario does not declare for the tool).
    unwanted: tuple[str, ...]


@dataclass(frozen=True)
class SampledRequest:
    """How one request asked the model to sample (retry:doom-loop), recorded for a
    scenario with a looping answer (a ``doom_loop`` fault)."""

    request: int  # RequestRecord.index
    sampling: tuple[str, ...]  # "temperature=0.8", sorted; empty: the provider's defaults
    carries_loop: bool  # a message of it says a looping answer's phrase twice running


@dataclass(frozen=True)
class AskedOutput:
    """The output limit one request asked for (S6:limit), recorded for a scenario that
    declares the model's ``provider.max_output_tokens``."""

    request: int  # RequestRecord.index
    limit: int | None  # None: the request set no limit


@dataclass(frozen=True)
class InlineResult:
    """One tool result one request carried, and how many characters of it (context:tool-output),
    recorded for a scenario that declares ``expect.max_tool_result_chars``."""

    request: int  # RequestRecord.index
    call_id: str
    chars: int  # as the model reads it (the reply's text in the request)


@dataclass(frozen=True)
class TraceExtra:
    """The trace's facts that are not records, each ``None`` when the case had none."""

    # "plain": an unchanged agent that reports nothing of its own (no stop state but
    # complete or failed, no usage, no cancel hook); None: an agent on the ports.
    agent: Literal["plain"] | None = None
    # The agent ran as its own process (``serve``/``--exec``), its times read in
    # scenario seconds at this scale (harness.checks._tolerance).
    process: bool | None = None
    time_scale: float | None = None
    # The answer the agent gave at the end, and the traceback it died with.
    final_answer: str | None = None
    agent_traceback: str | None = None
    # Every world event the case reached (its own files, tools, signals), in order.
    world_events: tuple[str, ...] | None = None
    # Calls that left the case for the outside ("METHOD url (library)"), how many of
    # them came from inside each tool, and the telemetry answered in their place.
    foreign_requests: tuple[str, ...] | None = None
    foreign_in_tools: dict[str, int] | None = None
    telemetry_requests: tuple[str, ...] | None = None
    # Requests sent to a provider path of another dialect than the scenario's.
    misdialed_requests: tuple[str, ...] | None = None
    # The stop sequences the agent's requests asked for. The API ends an answer before one
    # and leaves it out; an agent may put it back (smolagents' CodeAgent closes its code
    # block with the "</code>" it stopped at), which is still that answer's text (I8).
    stop_sequences: tuple[str, ...] | None = None
    # Databases the agent named that the harness cannot hold (a server DSN, a bad path).
    databases_refused: tuple[str, ...] | None = None
    # What the scenario declared for the jobs and cancel checks, and whether the agent
    # offered a cancel hook at all.
    jobs_declared: tuple[str, ...] | None = None
    cancels_declared: int | None = None
    cancel_hook: bool | None = None
    goal_cancels_declared: int | None = None
    # The calls each restart's durable journal proved never started (J4), and the runs
    # held past their return by a sleeping worker thread (CANCEL:held).
    never_started: tuple[NeverStartedCall, ...] | None = None
    held_after_return: tuple[HeldAfterReturn, ...] | None = None
    # Under a context window with a goal: which goal revisions each request told the model.
    goal_in_requests: tuple[GoalInRequest, ...] | None = None
    # The goal's execution lease lifetime, when the scenario declares one (I5:lease).
    lease_seconds: float | None = None
    # What each child of a subprocess tool received, for a scenario with such a tool
    # (empty: none started); every other case keeps its digest.
    child_environments: tuple[ChildEnvironment, ...] | None = None
    # The run's cap on tool calls, when the scenario sets one (budget:tool-calls).
    max_tool_calls: int | None = None
    # The run's cap on background jobs, when the scenario sets one (budget:job-starts).
    max_jobs: int | None = None
    # How long a background job may run, when the scenario sets it (budget:job-runtime).
    max_job_seconds: float | None = None
    # Lines of output a background job may write, when the scenario sets it (budget:job-output).
    max_job_output_lines: int | None = None
    # The after-tool hook's tool and its depth bound, when the scenario declares one (L3:hook).
    hook_tool: str | None = None
    hook_max_depth: int | None = None
    # Requests refused before the model for tool calls without results, by their turn.
    refused_turns: tuple[RefusedTurn, ...] | None = None
    # For a scenario with a looping answer (retry:doom-loop): its phrases, and how each
    # request sampled and whether it carried the loop back.
    loop_phrases: tuple[str, ...] | None = None
    sampled_requests: tuple[SampledRequest, ...] | None = None
    # For a scenario that declares the model's most output tokens (S6:limit): that ceiling,
    # and the output limit each request asked for.
    output_ceiling: int | None = None
    asked_outputs: tuple[AskedOutput, ...] | None = None
    # True for a scenario whose session is collected as training data (train:no-patch): the
    # agent was told so, and each request's tool replies are recorded.
    training_data: bool | None = None
    # For a scenario that declares a backup model (retry:backup): the primary model and
    # the backup; every other case keeps its digest.
    primary_model: str | None = None
    backup_model: str | None = None
    # For a scenario that declares the most characters of one tool result a request may
    # carry (context:tool-output): that limit, and each tool result each request carried.
    max_tool_result_chars: int | None = None
    inline_results: tuple[InlineResult, ...] | None = None

    def said(self) -> dict[str, Any]:
        """The fields the case said something in (the trace's JSON of this record)."""
        return {name: value for name, value in asdict(self).items() if value is not None}

    @property
    def plain(self) -> bool:
        """Whether the agent is an unchanged one that reports nothing of its own."""
        return self.agent == "plain"
