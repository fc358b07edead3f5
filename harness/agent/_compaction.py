"""Context compaction with a checked write-back (seed 000 §3.2; seed 002 §19.1 pi, §19.3).

The model's history is compacted, lossily, so the next request fits the model's
context window: the tool results and the narration of older turns are replaced
by a short placeholder (their size and hash), while every message, call and
reply keeps its place, so the transcript stays well formed (I2) and a reply is
never separated from its call. The task prompt is never compacted: the goal is
re-read from its durable record, never taken from a summary (seed 002 §19.3,
"摘要只引用 goalRevision,不要复制一份以后可能过期的目标"; see
:meth:`Compactor.goal_hook`).

Two triggers:

- **overflow** (seed 002 §19.1, pi: "上下文溢出不会落入普通网络重试,而是先压缩上下文再
  重试一次"): the provider refused the request with its context-length error; the
  loop compacts, then sends the turn's request again, once;
- **threshold** (seed 000 §3.2, "后台压缩"): the last prompt filled
  :attr:`CompactionConfig.threshold` of the window; compaction runs in the
  background while the turn's tools run, and the next request waits for it.

Compaction has persistence points of its own: its records live in a file of
their own beside the session log (``compaction.jsonl``, points such as
``compaction:fsync#2``), and refer to session-log records by ``seq``:

==========================  ===================================================
``compaction_start``        ``compactionId``, ``reason``, ``throughSeq`` (the last
                            session record it read: its snapshot), ``epoch``
``compaction``              ``compactionId``, ``throughSeq``, ``cleared`` (the seqs
                            of the session records it replaced), ``epoch``
``compaction_discarded``    ``compactionId``, ``reason``: a stale result, or one
                            a crash interrupted (written by recovery)
==========================  ===================================================

The write-back check (seed 000 §3.2: "写回时除了检查是否换了会话,还要检查历史有没有被
追加,否则压缩结果可能覆盖刚收到的新消息"): a result only ever replaces records at
or before its snapshot, so history appended while the summariser ran is kept
whole; and a result whose session epoch or incarnation is no longer the
session's is discarded (DESIGN L7), never written over the newer history.

Example::

    compactor = Compactor(log, store, CompactionConfig(), clock, incarnation=1)
    ticket = compactor.begin("context_overflow", "turn_4", keep_turns={"turn_3"})
    if ticket is not None:
        compactor.commit(ticket, await compactor.summarise(ticket))
    entries = compacted_entries(log, store)   # what build_request sends
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Literal

from harness.agent._classify import OVERFLOW_MARKERS, ProviderError
from harness.agent._log_records import CompactionEndRecord, CompactionStartRecord, cleared_of
from harness.agent._session_log import (
    AssistantEntry,
    Entry,
    ReplyEntry,
    SessionLog,
    SessionRecord,
    StaleEpochError,
    decode_assistant,
    decode_reply,
    decode_user,
)
from harness.ports import Clock

CompactionReason = Literal["context_overflow", "threshold"]

#: How a replaced tool result or narration starts, so a reader can tell it from the original.
COMPACTED_MARKER = "[compacted]"
_COMPACTABLE = ("assistant", "tool_reply")


@dataclass(frozen=True)
class CompactionConfig:
    """When and how the reference agent compacts (seconds are virtual).

    ``keep_appended=False`` reproduces the bug seed 000 §3.2 warns about (the
    result is written over history that arrived while it ran); it exists for the
    mutant catalogue and its tests.
    """

    enabled: bool = True
    # Seed 002 §19.1 (pi): after an overflow, compact and retry once; a second
    # overflow is reported, never retried again ("重试一次").
    overflow_retries: int = 1
    # Share of the window the last prompt may fill before compaction starts in the
    # background: early enough that the next turn's growth still fits.
    threshold: float = 0.75
    # The newest turns that keep their results whole: the model has not read them yet.
    keep_recent_turns: int = 1
    # How long summarising takes: a model call in production, so the turn's tools
    # run (and append) while it is under way.
    summary_seconds: float = 2.0
    keep_appended: bool = True


@dataclass(frozen=True)
class CompactionTicket:
    """One compaction under way: what it read, and the authority it started with (L7)."""

    compaction_id: str
    reason: CompactionReason
    through_seq: int
    epoch: int
    incarnation: int
    turn_id: str
    cleared: tuple[int, ...]


def cleared_seqs(store: SessionLog) -> set[int]:
    """The session seqs of every record a committed compaction replaced."""
    return {seq for r in store.of_kind("compaction") for seq in cleared_of(r.body)}


def compacted_entries(log: SessionLog, store: SessionLog) -> list[Entry]:
    """The session log's entries as the model sees them: replaced ones carry a placeholder.

    Without a compaction in ``store`` this is :meth:`SessionLog.entries`.
    """
    cleared = cleared_seqs(store)
    if not cleared:
        return log.entries()
    found: list[Entry] = []
    for record in log.records:
        if record.kind == "user":
            found.append(decode_user(record))
        elif record.kind in _COMPACTABLE:
            found.append(_placeholder(record) if record.seq in cleared else _entry(record))
    return found


def _entry(record: SessionRecord) -> Entry:
    return decode_assistant(record) if record.kind == "assistant" else decode_reply(record)


def _placeholder(record: SessionRecord) -> Entry:
    if record.kind == "assistant":
        entry: AssistantEntry = decode_assistant(record)
        return replace(entry, text=f"{COMPACTED_MARKER} narration" if entry.text else "")
    found = decode_reply(record)
    text = json.dumps(found.reply.content, sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    summary = f"{COMPACTED_MARKER} earlier result: {len(text)} characters, sha256 {digest}"
    return ReplyEntry(replace(found.reply, content=summary), found.execution_id)


def close_interrupted(store: SessionLog) -> list[str]:
    """Recovery: a compaction a crash cut short gets a definite end (once: I11)."""
    ended = {CompactionEndRecord.from_body(r.body).compaction_id for r in store.records
             if r.kind in ("compaction", "compaction_discarded")}
    starts = [(r.turn_id, CompactionStartRecord.from_body(r.body))
              for r in store.of_kind("compaction_start")]
    open_ids = [(turn_id, start) for turn_id, start in starts if start.compaction_id not in ended]
    for turn_id, start in open_ids:
        store.append("compaction_discarded", turn_id,
                     compactionId=start.compaction_id, reason="interrupted_before_restart")
    return [start.compaction_id for _, start in open_ids]


class Compactor:
    """Begins, summarises and writes back compactions over one session log."""

    def __init__(self, log: SessionLog, store: SessionLog, config: CompactionConfig,
                 clock: Clock, *, incarnation: int,
                 on_compacted: Callable[[CompactionTicket], None] | None = None) -> None:
        self.log = log  # the session log: what is compacted, and the session's epoch
        self.store = store  # compaction's own records
        self.config = config
        self._clock = clock
        self._incarnation = incarnation
        self._on_compacted = on_compacted

    def should_compact(self, last_prompt_tokens: int | None, window: int | None) -> bool:
        """Whether the last prompt filled the threshold share of the window."""
        if not self.config.enabled or window is None or last_prompt_tokens is None:
            return False
        return last_prompt_tokens >= self.config.threshold * window

    def overflow_retries_left(self, turn_id: str) -> bool:
        """Whether this turn may still compact and send again after an overflow."""
        if not self.config.enabled:
            return False
        done = sum(1 for r in self.store.of_kind("compaction_start")
                   if r.turn_id == turn_id
                   and CompactionStartRecord.from_body(r.body).reason == "context_overflow")
        return done < self.config.overflow_retries

    def begin(self, reason: CompactionReason, turn_id: str, keep_turns: Iterable[str]
              ) -> CompactionTicket | None:
        """Snapshot the history and write ``compaction_start``; ``None``: nothing to compact."""
        log, store = self.log, self.store
        through = log.records[-1].seq if log.records else 0
        cleared = _clearable(log, cleared_seqs(store), through, set(keep_turns))
        if not cleared:
            return None
        number = len(store.of_kind("compaction_start")) + 1
        ticket = CompactionTicket(f"cmp_{log.run_id}_{number}", reason, through, log.epoch,
                                  self._incarnation, turn_id, tuple(cleared))
        store.append("compaction_start", turn_id, compactionId=ticket.compaction_id,
                   reason=reason, throughSeq=through, epoch=ticket.epoch)
        return ticket

    async def summarise(self, ticket: CompactionTicket) -> tuple[int, ...]:
        """The records the result replaces; takes the summariser's time."""
        await self._clock.sleep(self.config.summary_seconds)
        if self.config.keep_appended:
            return ticket.cleared
        # The bug of seed 000 §3.2: the result stands for the whole history as it is
        # now, so what arrived while it ran is replaced by a summary that never read it.
        appended = [r.seq for r in self.log.records
                    if r.seq > ticket.through_seq and r.kind in _COMPACTABLE]
        return (*ticket.cleared, *appended)

    def commit(self, ticket: CompactionTicket, cleared: tuple[int, ...]) -> bool:
        """Write the result back, unless its epoch or incarnation is stale (then discard it)."""
        if ticket.incarnation != self._incarnation or ticket.incarnation != self.log.incarnation:
            return self._discard(ticket, f"started in incarnation {ticket.incarnation}")
        if ticket.epoch != self.log.epoch:  # the session log's epoch (L7), as write_back checks
            return self._discard(ticket, str(StaleEpochError(ticket.epoch, self.log.epoch)))
        self.store.append("compaction", ticket.turn_id, compactionId=ticket.compaction_id,
                          throughSeq=ticket.through_seq, cleared=list(cleared),
                          epoch=ticket.epoch)
        if self._on_compacted is not None:
            self._on_compacted(ticket)
        return True

    def _discard(self, ticket: CompactionTicket, why: str) -> bool:
        self.store.append("compaction_discarded", ticket.turn_id,
                        compactionId=ticket.compaction_id, reason=why)
        return False


def _clearable(log: SessionLog, done: set[int], through: int, keep_turns: set[str]
               ) -> list[int]:
    """Records at or before ``through`` not yet replaced, outside the turns kept whole."""
    return [r.seq for r in log.records
            if r.seq <= through and r.kind in _COMPACTABLE and r.seq not in done
            and r.turn_id not in keep_turns and _worth_replacing(r)]


def _worth_replacing(record: SessionRecord) -> bool:
    if record.kind == "assistant":
        return bool(decode_assistant(record).text)
    return not str(decode_reply(record).reply.content).startswith(COMPACTED_MARKER)


def recent_turns(log: SessionLog, count: int) -> set[str]:
    """The ids of the newest ``count`` turns that have an assistant message."""
    turns: list[str] = []
    for record in reversed(log.of_kind("assistant")):
        if len(turns) >= count:
            break
        if record.turn_id not in turns:
            turns.append(record.turn_id)
    return set(turns)


def is_overflow(error: ProviderError | None) -> bool:
    """Whether an attempt failed because the prompt is longer than the context window."""
    return error is not None and error.mentions(OVERFLOW_MARKERS)
