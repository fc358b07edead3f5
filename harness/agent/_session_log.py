"""The trusted session log: the one record a restarted agent rebuilds itself from.

Seed 002 §19.6 separates three streams: the *trusted session record* (model
messages, tool calls and results; used for recovery and audit), run metrics
(may be sampled or lost) and the security audit. This module is the first one.
Every line is appended durably (DESIGN J2, through :class:`DurableLineFile`);
if a line cannot be written, no further side effect may run (J6) — the loop
sees the :class:`harness.DiskError` and stops ``infra_paused``.

One JSON object per line, with ``seq``, ``kind``, ``runId``, ``incarnation``,
``at`` (virtual seconds) and ``turnId`` on every line, then per kind:

==============  ==============================================================
``session``     ``epoch``, ``seed``, ``dialect``, ``task`` (the task's fields),
                ``deadline`` (absolute virtual time: a restart buys no time)
``user``        ``text``, ``source`` (``task`` or ``guard``: a loop reminder)
``turn_start``  ``turn`` (1-based number)
``retry``       ``event``: a :class:`RetryEvent` (S7), written by the client
``attempt``     ``attemptId``, ``attemptKind``, ``status``, ``usage``, ``startedAt``,
                ``endedAt``, ``error`` — one per request attempt (L6)
``assistant``   ``attemptId``, ``continuationOf``, ``text``, ``finish``, ``rejected``
                (calls cut by truncation, never run: S6) and ``calls``
                (``callId``, ``tool``, ``argumentsText``, ``arguments``, ``argumentsError``),
                each value under a secret-looking or marked key redacted (J3)
``tool_reply``  ``callId``, ``executionId``, ``status``, ``content``, ``synthetic``
``guard``       ``counter``, ``action`` (``remind`` or ``stop``), ``reason``
``turn_end``    ``reason``
``stop``        ``stopState``, ``reason``, ``infraFailure``, ``turns``, ``epoch``
``lease``       ``epoch``, ``holder``, ``tookOver`` — the execution lease this
                incarnation took (seed 002 §19.3; only with a goal port)
``goal``        ``goal`` (id, revision, objective, acceptance, budget, restart
                policy, status), ``source`` (``service``, ``user_edit``,
                ``continuation_discarded``, ``complete``), ``epoch``, and
                ``proof`` or ``discarded`` where they apply
``recovery``    ``boundary``, ``nextAction``, ``goal``, ``epoch``, ``turns``,
                ``lastVerification``: the recovery record of a safe boundary
``verification`` ``goalId``, ``revision``, ``round``, ``outcome``, ``gaps``,
                ``fingerprint``, ``judge``, ``epoch`` (seed 002 §19.2)
``compaction*`` a compaction's start, result and discard, in a file of their own
                (``compaction.jsonl``, same line format: :mod:`._compaction`)
``breaker``     the circuit breaker opened or closed (:mod:`._breaker`)
==============  ==============================================================

The kinds recovery reads back have typed views: ``user``, ``assistant``,
``tool_reply``, ``attempt`` and ``retry`` below, the others in
:mod:`._log_records`; read a body through its view, never by key.

Session epoch (DESIGN L7; seed 000 §3.1 ``_sessionEpoch``): the ``session``
line holds the epoch; asynchronous write-back captures it when it starts and
:meth:`SessionLog.write_back` refuses a record from a stale epoch: the stop
record goes through it, and a compaction's result through the same check
(:mod:`._compaction`).

Example::

    log = SessionLog.open(disk, "/state/session.jsonl", run_id="run_1",
                          incarnation=1, clock=clock, root="/")
    log.append("user", "turn_1", text="hello", source="task")
    log.entries()   # [UserEntry(turn_id='turn_1', text='hello', source='task')]
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, final, get_args

from harness._errors import HarnessError
from harness._redact import redact, redact_text
from harness.agent._journal import DurableLineFile, LineMemo, typed_field
from harness.agent._log_records import SessionHeader
from harness.agent._messages import ToolCall
from harness.agent._retry_log import RetryEvent
from harness.agent._tools import ToolReply
from harness.ports import Clock, Disk, Usage

# One encoder for every line: json.dumps builds a new one per call.
_LINE_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)

RecordKind = Literal[
    "session",
    "user",
    "turn_start",
    "retry",
    "attempt",
    "assistant",
    "tool_reply",
    "guard",
    "turn_end",
    "stop",
    "lease",
    "goal",
    "recovery",
    "verification",
    "compaction_start",
    "compaction",
    "compaction_discarded",
    "breaker",
    "route",
]
KINDS: tuple[RecordKind, ...] = get_args(RecordKind)
_COMMON = ("seq", "kind", "runId", "incarnation", "at", "turnId")


class StaleEpochError(HarnessError):
    """An asynchronous write-back started under an epoch the session has left (L7)."""

    def __init__(self, started: int, current: int) -> None:
        self.started = started
        self.current = current
        super().__init__(
            f"write-back started in session epoch {started}, but the session is now at "
            f"epoch {current}; the result belongs to the old session and is dropped"
        )


@dataclass(frozen=True)
class SessionRecord:
    """One line of the session log: the common fields and the kind's own ``body``."""

    seq: int
    kind: RecordKind
    run_id: str
    incarnation: int
    at: float
    turn_id: str
    body: Mapping[str, Any]

    def to_line(self) -> bytes:
        fields = {
            "seq": self.seq,
            "kind": self.kind,
            "runId": self.run_id,
            "incarnation": self.incarnation,
            "at": self.at,
            "turnId": self.turn_id,
            **self.body,
        }
        return _LINE_ENCODER.encode(fields).encode() + b"\n"

    @classmethod
    def from_json(cls, fields: Any) -> SessionRecord:
        """Parse one line; ``ValueError`` says what is wrong (a torn or foreign line)."""
        if not isinstance(fields, dict):
            raise ValueError(f"a JSON object, got {type(fields).__name__}")
        kind = fields.get("kind")
        if kind not in KINDS:
            raise ValueError(f"kind one of {KINDS}, got {kind!r}")
        record = cls(
            typed_field(fields, "seq", int),
            kind,
            typed_field(fields, "runId", str),
            typed_field(fields, "incarnation", int),
            float(typed_field(fields, "at", (int, float))),
            typed_field(fields, "turnId", str),
            # Read-only: a parsed line is shared by every log that loads it (_SESSION_LINES).
            MappingProxyType({k: v for k, v in fields.items() if k not in _COMMON}),
        )
        _decode_body(record)  # validates the kind's own fields now, not mid-recovery
        return record


# Every incarnation and both recovery checks of a case reload the same session lines;
# a SessionRecord is frozen and its body read-only, and the loop only reads them.
_SESSION_LINES: LineMemo[SessionRecord] = LineMemo(SessionRecord.from_json, lambda _: True)


# -- typed views of the records the loop reads back --------------------------------


@dataclass(frozen=True)
class UserEntry:
    """User-side input of a turn: the task prompt, or a loop reminder (``source='guard'``)."""

    turn_id: str
    text: str
    source: str = "task"


@dataclass(frozen=True)
class AssistantEntry:
    """A committed assistant message; ``rejected`` calls were cut and never run (S6)."""

    turn_id: str
    attempt_id: str
    text: str
    finish: str
    calls: tuple[ToolCall, ...]
    rejected: bool = False
    continuation_of: str | None = None


@dataclass(frozen=True)
class ReplyEntry:
    """One tool reply, tied to its call by turn id and call id (J5)."""

    reply: ToolReply
    execution_id: str | None = None


@dataclass(frozen=True)
class AttemptEntry:
    """One request attempt and what it cost (L6: each attempt counted once)."""

    turn_id: str
    attempt_id: str
    status: str
    usage: Usage | None


Entry = UserEntry | AssistantEntry | ReplyEntry


def _decode_body(record: SessionRecord) -> object:
    kind = record.kind
    try:
        if kind == "user":
            return decode_user(record)
        if kind == "assistant":
            return decode_assistant(record)
        if kind == "tool_reply":
            return decode_reply(record)
        if kind == "attempt":
            return decode_attempt(record)
        if kind == "retry":
            return decode_retry(record)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"a {kind} record, missing or malformed {exc}") from exc
    return record.body


def decode_user(record: SessionRecord) -> UserEntry:
    body = record.body
    return UserEntry(record.turn_id, str(body["text"]), str(body["source"]))


def decode_attempt(record: SessionRecord) -> AttemptEntry:
    body = record.body
    return AttemptEntry(
        record.turn_id,
        str(body["attemptId"]),
        str(body["status"]),
        usage_from_json(body["usage"]),
    )


def decode_retry(record: SessionRecord) -> RetryEvent:
    return RetryEvent.from_json(dict(record.body["event"]))


def decode_assistant(record: SessionRecord) -> AssistantEntry:
    body = record.body
    calls = tuple(
        ToolCall(
            str(c["callId"]),
            str(c["tool"]),
            str(c["argumentsText"]),
            dict(c["arguments"]),
            c.get("argumentsError"),
        )
        for c in body["calls"]
    )
    return AssistantEntry(
        record.turn_id,
        str(body["attemptId"]),
        str(body["text"]),
        str(body["finish"]),
        calls,
        bool(body["rejected"]),
        body.get("continuationOf"),
    )


def decode_reply(record: SessionRecord) -> ReplyEntry:
    body = record.body
    reply = ToolReply(
        record.turn_id,
        str(body["callId"]),
        body["status"],
        body["content"],
        bool(body["synthetic"]),
    )
    return ReplyEntry(reply, body.get("executionId"))


def usage_to_json(usage: Usage | None) -> dict[str, int | None] | None:
    """``Usage`` as a JSON object (``None`` stays ``None``: not reported is not zero).

    >>> usage_to_json(Usage(3, 1))
    {'input': 3, 'output': 1, 'cacheRead': None, 'cacheWrite': None}
    """
    if usage is None:
        return None
    return {
        "input": usage.input_tokens,
        "output": usage.output_tokens,
        "cacheRead": usage.cache_read_tokens,
        "cacheWrite": usage.cache_write_tokens,
    }


def usage_from_json(fields: Any) -> Usage | None:
    if fields is None:
        return None
    return Usage(
        int(fields["input"]), int(fields["output"]), fields["cacheRead"], fields["cacheWrite"]
    )


def calls_to_json(
    calls: tuple[ToolCall, ...], secret_arguments: Mapping[str, Collection[str]] | None = None
) -> list[dict[str, Any]]:
    """The calls as the log stores them, secrets redacted (``secret_arguments`` by tool)."""
    marked = secret_arguments or {}
    return [_call_json(c, marked.get(c.name, ())) for c in calls]


def _call_json(call: ToolCall, marked: Collection[str]) -> dict[str, Any]:
    """One call, each value under a secret-looking or ``marked`` key redacted.

    Seed 000 §5: structured secret fields are redacted before anything is persisted
    (J3). Recovery needs no secret: the journal matches a call by its ids and keeps the
    arguments' SHA-256; a call is never re-run from the log. The text the model
    produced is kept byte for byte when it holds no secret.

    >>> call = ToolCall("c1", "login", '{"user":"ann","password":"hunter2"}', {"user": "ann",
    ...                 "password": "hunter2"})
    >>> _call_json(call, ())["argumentsText"]
    '{"user": "ann", "password": "[redacted]"}'
    """
    arguments = redact(dict(call.arguments), marked)
    assert isinstance(arguments, dict)
    text = call.arguments_text
    if call.arguments_error is not None:
        text = redact_text(text, marked)
    elif arguments != call.arguments:
        text = json.dumps(arguments, ensure_ascii=False)
    return {
        "callId": call.call_id,
        "tool": call.name,
        "argumentsText": text,
        "arguments": arguments,
        "argumentsError": call.arguments_error,
    }


@final
class SessionView:
    """A session log's records by kind, and its entries decoded: kept as records come.

    The loop reads the log back several times a turn (the next request, the
    guards, whether the run is over); decoding every record each time made a
    turn cost grow with the session, and a long run quadratic. Each record is
    decoded once, when it is appended or when the log is loaded (a restart),
    and the lists only grow. The lists are the view's own: read them, never
    change them.
    """

    def __init__(self, records: Iterable[SessionRecord]) -> None:
        self.records: list[SessionRecord] = []
        self._by_kind: dict[str, list[SessionRecord]] = {}
        self.entries: list[Entry] = []
        self.assistants: list[AssistantEntry] = []
        self.replies: list[ReplyEntry] = []
        self.attempts: list[AttemptEntry] = []
        for record in records:
            self.add(record)

    def of_kind(self, kind: RecordKind) -> list[SessionRecord]:
        return self._by_kind.get(kind, [])

    def add(self, record: SessionRecord) -> None:
        """Take one more record, the newest."""
        self.records.append(record)
        self._by_kind.setdefault(record.kind, []).append(record)
        if record.kind not in ("user", "assistant", "tool_reply", "attempt"):
            return
        decoded = _decode_body(record)
        if isinstance(decoded, AttemptEntry):
            self.attempts.append(decoded)
            return
        assert isinstance(decoded, UserEntry | AssistantEntry | ReplyEntry)
        self.entries.append(decoded)
        if isinstance(decoded, AssistantEntry):
            self.assistants.append(decoded)
        elif isinstance(decoded, ReplyEntry):
            self.replies.append(decoded)


@final
class SessionLog:
    """The session log of one run on ``disk``; see the module docstring."""

    def __init__(
        self, disk: Disk, path: str, *, run_id: str, incarnation: int, clock: Clock, root: str
    ) -> None:
        self.file = DurableLineFile(disk, path, root=root)
        self.run_id = run_id
        self.incarnation = incarnation
        self._clock = clock
        self._view = SessionView(())

    @property
    def records(self) -> list[SessionRecord]:
        """Every record, in the order written (read it; :meth:`append` adds to it)."""
        return self._view.records

    @records.setter
    def records(self, records: list[SessionRecord]) -> None:
        self._view = SessionView(records)

    @property
    def view(self) -> SessionView:
        """The records by kind and decoded, kept current as records are appended."""
        return self._view

    @classmethod
    def open(
        cls, disk: Disk, path: str, *, run_id: str, incarnation: int, clock: Clock, root: str
    ) -> SessionLog:
        """Load ``path``; a bad line before valid ones raises ``JournalCorruptError``."""
        log = cls(disk, path, run_id=run_id, incarnation=incarnation, clock=clock, root=root)
        log.records = log.file.load_lines(_SESSION_LINES, expected="a session record")
        return log

    def append(self, kind: RecordKind, turn_id: str, **body: Any) -> SessionRecord:
        """Write one record durably; only then does it join :attr:`records` (J2, J6)."""
        seq = self.records[-1].seq + 1 if self.records else 1
        record = SessionRecord(
            seq, kind, self.run_id, self.incarnation, self._clock.now(), turn_id, body
        )
        self.file.append(record.to_line())
        self._view.add(record)
        return record

    def write_back(self, started_epoch: int, kind: RecordKind, turn_id: str, **body: Any) -> None:
        """Append a record produced by work that began in ``started_epoch`` (L7)."""
        if started_epoch != self.epoch:
            raise StaleEpochError(started_epoch, self.epoch)
        self.append(kind, turn_id, **body)

    # -- reading back --------------------------------------------------------------

    def of_kind(self, kind: RecordKind) -> list[SessionRecord]:
        return list(self._view.of_kind(kind))

    def count(self, kind: RecordKind) -> int:
        """How many records of ``kind`` there are (no copy of them)."""
        return len(self._view.of_kind(kind))

    def last(self, kind: RecordKind) -> SessionRecord | None:
        """The newest record of ``kind``, or ``None``."""
        found = self._view.of_kind(kind)
        return found[-1] if found else None

    @property
    def header(self) -> SessionRecord | None:
        """The ``session`` record, or ``None`` for a session that never started."""
        found = self._view.of_kind("session")
        return found[0] if found else None

    @property
    def epoch(self) -> int:
        header = self.header
        return SessionHeader.from_body(header.body).epoch if header is not None else 0

    def entries(self) -> list[Entry]:
        """User messages, assistant messages and replies, in the order written."""
        return list(self._view.entries)

    def last_entry(self) -> Entry | None:
        """The newest of :meth:`entries`, without copying them."""
        entries = self._view.entries
        return entries[-1] if entries else None

    def assistants(self) -> list[AssistantEntry]:
        return list(self._view.assistants)

    def replies(self) -> list[ReplyEntry]:
        return list(self._view.replies)

    def retry_events(self) -> list[RetryEvent]:
        return [decode_retry(r) for r in self.of_kind("retry")]

    def attempts(self) -> list[AttemptEntry]:
        return list(self._view.attempts)

    def stop_record(self) -> SessionRecord | None:
        found = self.of_kind("stop")
        return found[-1] if found else None

    def open_turns(self) -> list[str]:
        """Turns started and never ended (a crash came between), in order."""
        ended = {r.turn_id for r in self.of_kind("turn_end")}
        return [r.turn_id for r in self.of_kind("turn_start") if r.turn_id not in ended]

    def attempt_ids(self) -> list[str]:
        """Every attempt id the log knows, in the order it first appears.

        An attempt cut short by a crash has no ``attempt`` line but may be
        named by a ``retry`` line written before the crash (S7).
        """
        seen: dict[str, None] = {}
        for record in self.records:
            if record.kind == "attempt":
                seen.setdefault(decode_attempt(record).attempt_id, None)
            elif record.kind == "retry":
                event = decode_retry(record)
                for attempt_id in (event.previous_attempt_id, event.attempt_id):
                    if attempt_id:
                        seen.setdefault(str(attempt_id), None)
        return list(seen)
