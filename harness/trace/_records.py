"""The finished trace of one case: what the world saw, as plain data the checkers read.

The runner records it; the checkers only read it (DESIGN §3, STYLE 2). Every
time is virtual; every list is in the order things happened, so the canonical
JSON of a trace — and its sha256 :attr:`Trace.digest` — is the same, byte for
byte, for the same scenario, crash and seed.

Shape (``Trace.to_json()``)::

    {"case": "name[journal:fsync#1:after:unsynced_lost]", "scenario": "name", "seed": 0,
     "crash": {"planned": "…", "fired": "journal:fsync#1", "second": null, "reached": true},
     "points": ["state:mkdir#1", …],              # persistence points of the main runs
     "incarnations": [{"number": 1, "purpose": "run", "crashed_at": "journal:fsync#1",
                       "stop_state": null, "error": null, "ended_at": 0.0}, …],
     "requests": [RequestRecord…], "invocations": [InvocationRecord…],
     "effects": [EffectRecord…], "outcome": {…} | null,
     "recoveries": [RecoveryRecord, RecoveryRecord], "expect": {…},
     "secrets": {"looked_for": ["mail.password"], "files": 2, "leaks": [SecretLeak…]} | null}
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any, Literal, NamedTuple

from harness.ports import (
    CompletionProof,
    FinishReason,
    Goal,
    GoalAction,
    GoalEventKind,
    GoalStatus,
    JudgeKind,
    ReplyStatus,
    RestartPolicy,
    StopState,
    ToolKind,
    VerifierOutcome,
)
from harness.trace._extra import TraceExtra
from harness.trace._jobs import CancelRecord, JobRecord

#: What a request's stream did, as the world saw it.
#: ``complete``: every planned byte was delivered and the stream is intact;
#: ``partial``: some bytes, then a reset, a hang cut by the client, or a close;
#: ``broken``: every byte arrived but the stream itself is faulty (no terminal
#: event, an error event, a malformed frame, an empty body: the faults the fakes
#: declare with ``breaks_stream``, see :data:`harness.ports.BROKEN_STREAM_FAULTS`);
#: ``http_error``: a non-200 answer; ``refused``: a dead incarnation asked.
Delivery = Literal["complete", "partial", "broken", "http_error", "refused"]
#: Why an incarnation ran: the case's own run, or a second ``recover()`` (I11).
Purpose = Literal["run", "recover-check"]
Role = Literal["user", "assistant", "tool"]
#: How a tool invocation ended, as the world saw it: ``refused`` when a dead
#: incarnation called; ``running`` while in flight; ``abandoned`` when still in
#: flight after the agent's run() returned (``ended_at`` is then None).
InvocationOutcome = Literal["ok", "error", "cancelled", "refused", "running", "abandoned"]


class CallRecord(NamedTuple):
    """One tool call of a transcript message (serialised as a list, as a tuple was)."""

    call_id: str
    name: str
    arguments: str  # canonical JSON


class SegmentVersion(NamedTuple):
    """The version of one prompt segment a request carried (system, tools, …)."""

    segment: str
    version: str


class ExpectedEffects(NamedTuple):
    """How many side effects the scenario expects one tool to leave in the ledger."""

    tool: str
    effects: int


class ToolKindOf(NamedTuple):
    """The kind a scenario declares one tool with."""

    tool: str
    kind: ToolKind


@dataclass(frozen=True)
class SentCall:
    """A tool call exactly as the provider sent it (arguments as text, maybe cut)."""

    call_id: str
    name: str
    arguments_text: str

    def arguments(self) -> dict[str, Any] | None:
        """The parsed arguments, or ``None`` if the text is not a JSON object.

        >>> SentCall("c", "f", '{"a": 1').arguments() is None
        True
        """
        try:
            value = json.loads(self.arguments_text) if self.arguments_text.strip() else {}
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


@dataclass(frozen=True)
class SentReply:
    """A tool reply as one request carried it to the model (recorded under a context window)."""

    call_id: str
    text: str


@dataclass(frozen=True)
class SentUsage:
    """Usage the provider put in a stream (``input_tokens`` counts cached tokens too)."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True)
class CacheRecord:
    """The prompt cache's verdict on one request (DESIGN §7): its miss label and versions.

    ``miss`` is ``None`` for a full hit; ``versions`` pairs each prompt segment
    (system, tools, instructions, history, compaction, model) with its version.
    """

    miss: str | None
    write_5m_tokens: int
    write_1h_tokens: int
    versions: tuple[SegmentVersion, ...]


@dataclass(frozen=True)
class RequestRecord:
    """One request the provider received (or refused), and what it sent back.

    ``text``, ``calls``, ``finish`` and ``usage`` are the scripted answer after
    response faults (a cut tool call is cut here too); ``usage_reported`` says
    the usage actually reached the client (a complete stream that carried it).
    """

    index: int
    incarnation: int
    turn: int
    attempt: int
    started_at: float
    first_byte_at: float | None
    ended_at: float | None
    status: int
    faults: tuple[str, ...]
    planned_bytes: int
    delivered_bytes: int
    delivery: Delivery
    truncated: bool
    finish: FinishReason | None
    model: str | None
    text: str
    calls: tuple[SentCall, ...]
    usage: SentUsage | None
    usage_reported: bool
    unscripted: bool = False
    cache: CacheRecord | None = None
    attempt_id: str | None = None  # as the agent named the attempt (x-attempt-id), if it did
    retry_layer: str | None = None  # the retry layer the agent said it retried at
    # The wait the answer asked for (Retry-After / retry-after-ms), in seconds.
    retry_after: float | None = None
    # The longest time the client sat on the open stream without a chunk, counted
    # from its first chunk to the next one or to the moment it let go (S1).
    longest_silence: float = 0.0
    # The usage (input and output) among the bytes the client was sent, if any arrived.
    usage_seen: SentUsage | None = None
    # The tool names the agent offered the model in this request (None: it sent no list).
    offered_tools: tuple[str, ...] | None = None
    # Under a context window (scenario provider.context_window): the prompt's tokens as the
    # fake counts them, and every tool reply the request carried, for the compaction checks.
    prompt_tokens: int | None = None
    replies: tuple[SentReply, ...] = ()
    # A standing condition answered instead of the script: context_overflow or outage.
    condition: str | None = None
    # Faults keyed to this request that its stream could not take, left out: (kind, why).
    unfit_faults: tuple[tuple[str, str], ...] = ()

    @property
    def complete(self) -> bool:
        return self.delivery == "complete"

    @property
    def committable(self) -> bool:
        """A whole, untruncated answer: the only kind whose tool calls may run (S2, S6)."""
        return self.complete and not self.truncated


@dataclass(frozen=True)
class InvocationRecord:
    """One tool invocation the world saw (refused ones included)."""

    seq: int
    tool: str
    kind: ToolKind
    call_id: str
    arguments: dict[str, Any]
    incarnation: int
    started_at: float
    ended_at: float | None
    refused: bool
    outcome: InvocationOutcome
    # The case's disk error (EIO, ENOSPC) had already been raised when it started (J6).
    after_disk_error: bool = False
    # What the tool returned, as canonical JSON (ok invocations only).
    result: str | None = None


@dataclass(frozen=True)
class EffectRecord:
    """One side effect in the ledger."""

    seq: int
    tool: str
    key: str
    idempotent: bool
    incarnation: int
    at: float


@dataclass(frozen=True)
class MessageRecord:
    """A transcript message of the final outcome (dialect-neutral)."""

    role: Role
    turn_id: str
    text: str = ""
    tool_calls: tuple[CallRecord, ...] = ()
    attempt_id: str | None = None
    call_id: str | None = None
    status: ReplyStatus | None = None
    synthetic: bool = False


@dataclass(frozen=True)
class OutcomeRecord:
    """The final :class:`~harness.ports.AgentOutcome`, as plain data."""

    stop_state: StopState
    reason: str
    transcript: tuple[MessageRecord, ...]
    billed_usage: SentUsage | None
    context_tokens: int | None
    turns: int
    infra_failure: bool
    attempt_ids: tuple[str, ...]


@dataclass(frozen=True)
class IncarnationRecord:
    """One agent incarnation: why it ran, where it crashed, how it ended."""

    number: int
    purpose: Purpose
    crashed_at: str | None
    stop_state: StopState | None
    error: str | None
    ended_at: float


@dataclass(frozen=True)
class RecoveryRecord:
    """One ``recover()`` on a fresh incarnation after the final run (I11)."""

    incarnation: int
    not_started: tuple[str, ...]
    unknown: tuple[str, ...]
    repaired_replies: tuple[str, ...]
    files_sha256: str
    requests_during: int
    effects_during: int
    error: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.not_started or self.unknown or self.repaired_replies)


@dataclass(frozen=True)
class CrashRecord:
    """The crash the case planned and what happened to it."""

    planned: str | None
    fired: str | None
    second: str | None
    error_class: bool

    @property
    def disk_error_raised(self) -> bool:
        """The case's disk error (EIO, ENOSPC) was raised: the trusted log failed a write (J6)."""
        return self.error_class and self.fired is not None

    @property
    def reached(self) -> bool:
        """Whether the planned crash happened: both crashes for a ``…:again`` case."""
        if self.planned is None:
            return True
        again = self.planned.endswith(":again")
        return self.fired is not None and (not again or self.second is not None)


@dataclass(frozen=True)
class SecretLeak:
    """A secret value found in a file the agent left on the crash disk (J3).

    ``secret`` says where the value was passed (``mail.password``), never the value.
    """

    incarnation: int
    path: str
    offset: int
    secret: str


@dataclass(frozen=True)
class SecretsRecord:
    """What the agent's files held of the case's secrets, looked at after every incarnation.

    ``looked_for`` names each secret by where it was passed (``mail.password``), never
    by its value; ``files`` is the most files the crash disk held at a look.
    """

    looked_for: tuple[str, ...]
    files: int
    leaks: tuple[SecretLeak, ...]


@dataclass(frozen=True)
class ExpectationRecord:
    """What the scenario expects, copied so a trace can be judged on its own."""

    stop_state: StopState
    invariants: tuple[str, ...]
    side_effects: tuple[ExpectedEffects, ...]
    deadline_seconds: float
    max_attempts: int
    pure_tools: tuple[str, ...]
    tool_kinds: tuple[ToolKindOf, ...]
    # (turn, attempt, kind) of every scripted fault: a case proves nothing about
    # a fault it never reached.
    faults: tuple[tuple[int, int, str], ...] = ()
    # Tools that must never run beside another call (L2).
    unsafe_tools: tuple[str, ...] = ()
    # The bounds the timing checks judge by (seed 002 "自建起步" ① and ⑤, §19.1).
    idle_bound_seconds: float = 30.0
    retry_after_cap_seconds: float = 60.0
    max_consecutive_429: int = 3
    min_backoff_seconds: float = 1.0
    # The exact stop state once the case's disk error was raised (J6).
    stop_state_after_disk_error: StopState = "infra_paused"
    # The circuit breaker the scenario expects: (failures_to_open, cooldown_seconds).
    breaker: tuple[int, float] | None = None
    # The run's token and dollar budgets (seed 002 §19.2), when the scenario sets them.
    max_tokens: int | None = None
    max_cost_usd: float | None = None


@dataclass(frozen=True)
class ProofRecord:
    """A completion proof as the goal service received it (seed 002 §19.2 完成依据)."""

    goal_id: str
    revision: int
    verification_round: int
    checks: tuple[tuple[str, int], ...]  # (command, exit code)
    criteria: tuple[tuple[str, str], ...]  # (criterion, verdict)
    judge_kind: JudgeKind
    judge: str

    @classmethod
    def of(cls, proof: CompletionProof) -> ProofRecord:
        """The record of a proof the goal port received."""
        return cls(proof.goal_id, proof.revision, proof.verification_round,
                   tuple((c.command, c.exit_code) for c in proof.checks),
                   tuple((c.criterion, c.verdict) for c in proof.criteria),
                   proof.judge_kind, proof.judge)


def goal_identity_json(goal: Goal) -> str:
    """A goal's identity fields as canonical JSON, compared field for field by I5."""
    return json.dumps(goal.identity(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class GoalEventRecord:
    """One call of the world's goal service (or a user edit), with its state after it.

    ``requests_before`` and ``invocations_before`` place it among the requests
    (by ``RequestRecord.index``) and tool invocations (by ``InvocationRecord.seq``):
    it came after that many of each. ``declared`` is the goal identity the agent
    named, as canonical JSON; ``verdict`` and ``gaps`` are a verifier round's.
    """

    seq: int
    kind: GoalEventKind
    incarnation: int  # 0: the user
    at: float
    requests_before: int
    invocations_before: int
    revision: int
    epoch: int
    holder: int
    status: GoalStatus
    action: GoalAction | None = None
    declared: str | None = None
    declared_revision: int | None = None
    declared_epoch: int | None = None
    verdict: VerifierOutcome | None = None
    gaps: tuple[str, ...] = ()
    proof: ProofRecord | None = None
    ok: bool | None = None
    reason: str = ""


@dataclass(frozen=True)
class GoalTrace:
    """The goal service's record of a case: every revision, every call, the final state.

    ``revisions`` holds the identity of each revision as canonical JSON (index 0 is
    revision 1); ``used`` says whether the agent ever called the service.
    """

    goal_id: str
    restart_policy: RestartPolicy
    acceptance: tuple[tuple[str, ...], ...]  # per revision
    revisions: tuple[str, ...]
    events: tuple[GoalEventRecord, ...]
    final_status: GoalStatus
    used: bool

    @property
    def final_revision(self) -> int:
        return len(self.revisions)


@dataclass(frozen=True)
class Trace:
    """Everything one case did; see the module docstring for the JSON shape."""

    case: str
    scenario: str
    seed: int
    crash: CrashRecord
    points: tuple[str, ...]
    incarnations: tuple[IncarnationRecord, ...]
    requests: tuple[RequestRecord, ...]
    invocations: tuple[InvocationRecord, ...]
    effects: tuple[EffectRecord, ...]
    outcome: OutcomeRecord | None
    recoveries: tuple[RecoveryRecord, ...]
    expect: ExpectationRecord
    final_incarnation: int = 1
    error: str | None = None
    extra: TraceExtra = field(default_factory=TraceExtra)
    dialect: str = ""
    jobs: tuple[JobRecord, ...] = ()
    cancels: tuple[CancelRecord, ...] = ()
    # None: nothing secret to look for (no marked argument, no secret-looking key).
    secrets: SecretsRecord | None = None
    goal: GoalTrace | None = None

    def to_json(self) -> dict[str, Any]:
        """The trace as JSON-ready data, its ``extra`` holding only what the case said."""
        data = asdict(self)
        data["extra"] = self.extra.said()
        return data

    def canonical_json(self) -> str:
        """Sorted keys, no spaces, UTF-8 kept: the bytes the digest is taken over.

        The same text as ``json.dumps(self.to_json(), ...)``, without first
        copying the whole trace into dicts.
        """
        return _CANONICAL.encode(self)

    @property
    def digest(self) -> str:
        """sha256 of :meth:`canonical_json`; the same seed gives the same digest."""
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _record_fields(value: object) -> dict[str, Any]:
    """A trace record as the dict ``asdict`` makes of it, one level deep (the encoder recurses)."""
    kind = type(value)
    if kind is TraceExtra:
        return value.said()  # type: ignore[attr-defined, no-any-return]
    names = _FIELD_NAMES.get(kind)
    if names is None:
        if not is_dataclass(value) or isinstance(value, type):
            raise TypeError(f"Object of type {kind.__name__} is not JSON serializable")
        names = _FIELD_NAMES[kind] = tuple(f.name for f in fields(value))
    return {name: getattr(value, name) for name in names}


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                              allow_nan=False, default=_record_fields)
