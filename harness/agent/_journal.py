"""The durable tool-execution journal (seed 000 §1-2; DESIGN J1-J4).

Each tool call leaves up to three JSONL lines sharing an ``executionId``:
``intent`` (about to run), ``execution_started`` (durable *before* the tool
runs) and ``result`` (with an ``outcome``). A line carries ``seq``,
``callId``, ``turnId``, ``tool``, ``runId``, the virtual time ``at`` and the
SHA-256 of the arguments (and of the result) — never the raw values (J3).

After a restart, :meth:`ToolJournal.recover` turns a call whose last line is
``intent`` into ``interrupted_before_execution`` (it never ran: seed 002 §19.1
TOOL_NOT_STARTED) and one whose last line is ``execution_started`` into
``unknown_after_restart`` (TOOL_OUTCOME_UNKNOWN), and writes that terminal
record, so loading the journal again recovers nothing (I11).

Example::

    journal = ToolJournal.open(disk, "/state/journal.jsonl", run_id="run_1", clock=clock)
    journal.recover()                       # [] on a fresh journal
    ex = journal.record_intent(call)
    journal.record_started(ex)              # durable before the tool runs
    journal.record_result(ex, "returned", {"ok": True})
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Generic, Literal, TypeVar, get_args

from harness._errors import HarnessError, JournalCorruptError
from harness.agent._disk import ensure_dir
from harness.ports import (
    AppendFile,
    Clock,
    Disk,
    IdSource,
    KeyedCall,
    ToolInvocation,
    dirname,
    sha256_json,
)

# Shared encoders: json.dumps builds a new one per call, and every record uses one.
_LINE_ENCODER = json.JSONEncoder(separators=(",", ":"))
_DECODER = json.JSONDecoder()

R = TypeVar("R")

State = Literal["intent", "execution_started", "result"]
Outcome = Literal[
    "returned",
    "rejected_before_execution",
    "blocked_before_execution",
    "interrupted_before_execution",
    "unknown_after_restart",
    "timeout",
]
STATES: tuple[State, ...] = get_args(State)
# The outcomes of a call that did start: the tool ran (or may have).
_STARTED_OUTCOMES: frozenset[Outcome] = frozenset({"returned", "unknown_after_restart",
                                                   "timeout"})
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
#: Outcomes after which the tool certainly had no effect.
NOT_STARTED_OUTCOMES = frozenset(
    {"rejected_before_execution", "blocked_before_execution", "interrupted_before_execution"}
)


@dataclass(frozen=True)
class JournalRecord:
    """One journal line.

    >>> r = JournalRecord("intent", "exec_1", 1, "call_1", "turn_1", "send", "run_1", 0.0, "ab")
    >>> JournalRecord.from_json(json.loads(r.to_line())) == r
    True
    """

    state: State
    execution_id: str
    seq: int
    call_id: str
    turn_id: str
    tool: str
    run_id: str
    at: float
    args_sha256: str
    result_sha256: str | None = None
    outcome: Outcome | None = None

    def to_line(self) -> bytes:
        fields: dict[str, Any] = {
            "seq": self.seq,
            "state": self.state,
            "executionId": self.execution_id,
            "callId": self.call_id,
            "turnId": self.turn_id,
            "tool": self.tool,
            "runId": self.run_id,
            "at": self.at,
            "argsSha256": self.args_sha256,
        }
        if self.state == "result":
            fields["outcome"] = self.outcome
            fields["resultSha256"] = self.result_sha256
        return _LINE_ENCODER.encode(fields).encode() + b"\n"

    @classmethod
    def from_json(cls, fields: Any) -> JournalRecord:
        """Build a record from a parsed line; ``ValueError`` says what is wrong."""
        if not isinstance(fields, dict):
            raise ValueError(f"a JSON object, got {type(fields).__name__}")
        state = typed_field(fields, "state", str)
        if state not in STATES:
            raise ValueError(f"state one of {STATES}, got {state!r}")
        outcome = fields.get("outcome")
        if state == "result" and outcome not in OUTCOMES:
            raise ValueError(f"outcome one of {OUTCOMES}, got {outcome!r}")
        at = typed_field(fields, "at", (int, float))
        return cls(
            state=state,
            execution_id=typed_field(fields, "executionId", str),
            seq=typed_field(fields, "seq", int),
            call_id=typed_field(fields, "callId", str),
            turn_id=typed_field(fields, "turnId", str),
            tool=typed_field(fields, "tool", str),
            run_id=typed_field(fields, "runId", str),
            at=float(at),
            args_sha256=typed_field(fields, "argsSha256", str),
            result_sha256=fields.get("resultSha256"),
            outcome=outcome,
        )


def typed_field(
    fields: Mapping[str, Any], name: str, kind: type[R] | tuple[type[R], ...]
) -> R:
    """``fields[name]`` if it has the type ``kind`` (never a bool), else ``ValueError``.

    >>> typed_field({"seq": 3}, "seq", int)
    3
    >>> typed_field({"at": True}, "at", (int, float))
    Traceback (most recent call last):
    ValueError: 'at' of type int or float, got True
    """
    value = fields.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        shown = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise ValueError(f"{name!r} of type {shown}, got {value!r}")
    return value


@dataclass(frozen=True)
class Execution(KeyedCall):
    """One call's history folded to its latest record."""

    execution_id: str
    call_id: str
    turn_id: str
    tool: str
    args_sha256: str
    state: State
    outcome: Outcome | None = None
    result_sha256: str | None = None


@dataclass(frozen=True)
class RecoveredExecution:
    """A call recovery closed, with the outcome it wrote."""

    execution: Execution
    outcome: Outcome


class DurableLineFile:
    """A JSONL file appended durably (DESIGN J2; seed 000 §1.2 ``durableAppendLine``).

    Every append: create the folder (fsyncing its parent), cut whatever follows
    the last complete record — a torn line of any length, not only the last
    64 KiB as in the seed — open for append with mode 0600, write, fsync. The
    first append of each incarnation also fsyncs every folder from the file's
    up to ``root``, so a name created before a crash becomes durable too.

    >>> from fakes import CrashDisk
    >>> f = DurableLineFile(CrashDisk().view(), "/state/log.jsonl", root="/")
    >>> f.load(json.loads)
    []
    >>> f.append(b'{"a":1}\\n')
    """

    def __init__(self, disk: Disk, path: str, *, root: str = "/") -> None:
        self.disk = disk
        self.path = posixpath.normpath(path)
        self.root = posixpath.normpath(root)
        self._good_size: int | None = None
        self._names_synced = False

    def load(self, parse: Callable[[Any], R], expected: str = "a record") -> list[R]:
        """Parse every complete record; remember where the valid part ends.

        Lines after the last valid record are a torn tail and are cut on the
        next append. A bad line *before* a valid record raises
        :class:`JournalCorruptError` with its line number.
        """
        return self.load_lines(lambda line: parse(_loads_line(line)), expected)

    def load_lines(self, parse_line: Callable[[bytes], R], expected: str = "a record") -> list[R]:
        """:meth:`load` with a parser that takes each line's bytes (without its newline)."""
        data = self.disk.read(self.path) if self.disk.exists(self.path) else b""
        records: list[R] = []
        bad: tuple[int, bytes, str] | None = None
        offset = good = 0
        for number, line in enumerate(data.split(b"\n")[:-1], start=1):
            offset += len(line) + 1
            try:
                record = parse_line(line)
            except ValueError as exc:
                bad = bad or (number, line, str(exc))
                continue
            if bad is not None:
                raise JournalCorruptError(self.path, bad[0], _show(bad[1], bad[2]), expected)
            records.append(record)
            good = offset
        self._good_size = good
        return records

    def append(self, line: bytes) -> None:
        """Append one complete line durably; on error the line may be cut later."""
        if self._good_size is None:
            raise HarnessError(f"load {self.path!r} before appending to it")
        folder = dirname(self.path)
        ensure_dir(self.disk, folder, root=self.root)
        if self.disk.exists(self.path) and self.disk.size(self.path) != self._good_size:
            self.disk.truncate(self.path, self._good_size)
        with self.disk.open_append(self.path) as handle:
            self._write(handle, line)
        if not self._names_synced:
            # Until the folders are synced the file's name, and so the line, may not
            # be durable: a failure here fails the append, and the line is cut.
            self._sync_names(folder)
        self._good_size += len(line)

    def _write(self, handle: AppendFile, line: bytes) -> None:
        handle.write(line)
        handle.fsync()

    def _sync_names(self, folder: str) -> None:
        while True:
            self.disk.fsync_dir(folder)
            if folder in (self.root, "/") or not folder.startswith(self.root):
                break
            folder = posixpath.dirname(folder)
        self._names_synced = True


def _loads_line(line: bytes) -> Any:
    """``json.loads(line)``, skipping its encoding sniffing for a line that opens an object.

    ``json.loads`` decodes bytes as UTF-8 unless they start with a BOM or a NUL
    in the first bytes; a line starting ``{`` and then no NUL is UTF-8 to it,
    so decoding it here gives the same value and the same errors.
    """
    if line[:1] == b"{" and line[1:2] != b"\0":
        return _DECODER.decode(line.decode("utf-8", "surrogatepass"))
    return json.loads(line)


class LineMemo(Generic[R]):
    """Parsed lines by their bytes: every incarnation, and every case of a crash
    exploration, reloads the same lines of the same files.

    Only records ``shareable`` says nobody can change are remembered (a frozen
    record of scalars, say); a line that fails to parse is not remembered: it
    raises the same error each time. The oldest entry goes first past ``limit``.
    """

    def __init__(self, parse: Callable[[Any], R], shareable: Callable[[R], bool],
                 limit: int = 8192) -> None:
        self.entries: dict[bytes, R] = {}
        self._parse = parse
        self._shareable = shareable
        self._limit = limit

    def __call__(self, line: bytes) -> R:
        record = self.entries.get(line)
        if record is None:
            record = self._parse(_loads_line(line))
            if self._shareable(record):
                if len(self.entries) >= self._limit:
                    del self.entries[next(iter(self.entries))]  # the oldest
                self.entries[line] = record
        return record


# A JournalRecord is frozen; one whose fields are all str, int, float or None is safe
# to share (from_json leaves the optional fields of a foreign line unchecked, so those
# are not remembered).
_JOURNAL_LINES: LineMemo[JournalRecord] = LineMemo(
    JournalRecord.from_json, lambda r: _all_scalar(r.outcome, r.result_sha256))
_PARSED = _JOURNAL_LINES.entries


def parse_journal_line(line: bytes) -> JournalRecord:
    """``JournalRecord.from_json(json.loads(line))``, remembered by the line's bytes."""
    return _JOURNAL_LINES(line)


def _all_scalar(*values: object) -> bool:
    return all(value is None or isinstance(value, str) for value in values)


def _show(line: bytes, why: str) -> str:
    text = line[:60].decode("utf-8", "backslashreplace")
    more = "…" if len(line) > 60 else ""
    return f"{text!r}{more} ({why})"


class ToolJournal:
    """The journal of one session; see the module docstring.

    ``run_id`` goes into every record; ``seed`` derives execution ids.
    """

    def __init__(
        self,
        disk: Disk,
        path: str,
        *,
        run_id: str,
        clock: Clock,
        seed: int = 0,
        root: str = "/",
    ) -> None:
        self.file = DurableLineFile(disk, path, root=root)
        self.run_id = run_id
        self._clock = clock
        self._seed = seed
        self._executions: dict[str, Execution] = {}
        # The newest execution of each call, so find() reads one entry, not the journal.
        self._latest: dict[tuple[str, str], str] = {}
        self._next_seq = 1

    @classmethod
    def open(
        cls, disk: Disk, path: str, *, run_id: str, clock: Clock, seed: int = 0, root: str = "/"
    ) -> ToolJournal:
        """Build a journal on ``path`` and load what is there."""
        journal = cls(disk, path, run_id=run_id, clock=clock, seed=seed, root=root)
        journal.load()
        return journal

    def load(self) -> None:
        records = self.file.load_lines(parse_journal_line, expected="a journal record")
        self._executions = {}
        self._latest = {}
        last_seq = 0
        for number, record in enumerate(records, start=1):
            if record.seq <= last_seq:
                found = f"seq {record.seq} after seq {last_seq}"
                raise JournalCorruptError(self.file.path, number, found, "increasing seq")
            last_seq = record.seq
            self._fold(record)
        self._next_seq = last_seq + 1

    def _fold(self, record: JournalRecord) -> None:
        known = self._executions.get(record.execution_id)
        self._executions[record.execution_id] = Execution(
            record.execution_id,
            record.call_id,
            record.turn_id,
            record.tool,
            record.args_sha256,
            record.state,
            record.outcome,
            record.result_sha256,
        )
        key = (record.turn_id, record.call_id)
        if known is None:
            self._latest[key] = record.execution_id  # first written last: its call's newest
        elif known.key != key:
            # A foreign line moved a known execution to another call: index them all anew.
            self._latest = {e.key: e.execution_id for e in self._executions.values()}

    @property
    def executions(self) -> list[Execution]:
        """Every execution, in the order its first record was written."""
        return list(self._executions.values())

    def started_calls(self) -> int:
        """How many calls ever started to run, across every incarnation (seed 002 §19.2,
        ToolBudget(maxCalls)): an execution re-run after a restart is its call's once more."""
        return len({e.key for e in self._executions.values() if e.state == "execution_started"
                    or (e.state == "result" and e.outcome in _STARTED_OUTCOMES)})

    def pending(self) -> list[Execution]:
        """Executions without a ``result`` record."""
        return [e for e in self._executions.values() if e.state != "result"]

    def find(self, turn_id: str, call_id: str) -> Execution | None:
        """The latest execution of the call ``(turn_id, call_id)``, if any."""
        execution_id = self._latest.get((turn_id, call_id))
        return self._executions[execution_id] if execution_id is not None else None

    def record_intent(self, call: ToolInvocation) -> str:
        """Write ``intent`` durably and return the new execution id.

        The id counts the executions on disk, as a reload counts them: an intent
        that failed to append leaves no gap that a later incarnation would fill
        with an id already in use.
        """
        execution_id = IdSource(self._seed, "exec", start=len(self._executions)).next()
        base = Execution(
            execution_id,
            call.call_id,
            call.turn_id,
            call.tool,
            sha256_json(call.arguments),
            "intent",
        )
        self._append(base, "intent")
        return execution_id

    def record_started(self, execution_id: str) -> None:
        """Write ``execution_started`` durably; the tool may run only after this returns."""
        self._append(self._executions[execution_id], "execution_started")

    def record_result(self, execution_id: str, outcome: Outcome, result: Any = None) -> None:
        """Write the terminal ``result`` record with ``outcome`` (and the result's hash)."""
        digest = None if result is None else sha256_json(result)
        self._append(self._executions[execution_id], "result", outcome, digest)

    def _append(
        self,
        execution: Execution,
        state: State,
        outcome: Outcome | None = None,
        result_sha256: str | None = None,
    ) -> None:
        record = JournalRecord(
            state,
            execution.execution_id,
            self._next_seq,
            execution.call_id,
            execution.turn_id,
            execution.tool,
            self.run_id,
            self._clock.now(),
            execution.args_sha256,
            result_sha256,
            outcome,
        )
        self.file.append(record.to_line())
        # Only a durable record changes what we believe; a failed append leaves
        # seq and state as they were, and its bytes are cut on the next append.
        self._next_seq += 1
        if execution.execution_id not in self._executions:
            self._latest[execution.key] = execution.execution_id
        self._executions[execution.execution_id] = replace(
            execution, state=state, outcome=outcome, result_sha256=result_sha256
        )

    def recover(self) -> list[RecoveredExecution]:
        """Close every pending execution with a terminal record (J4; seed 000 §2.1).

        Raises :class:`harness.DiskError` if a terminal record cannot be written;
        the executions closed so far stay closed.
        """
        recovered = []
        for execution in self.pending():
            outcome = self.recovered_outcome(execution)
            self.record_result(execution.execution_id, outcome)
            recovered.append(RecoveredExecution(execution, outcome))
        return recovered

    def recovered_outcome(self, execution: Execution) -> Outcome:
        """``execution_started`` → unknown_after_restart; ``intent`` → interrupted."""
        if execution.state == "execution_started":
            return "unknown_after_restart"
        return "interrupted_before_execution"
