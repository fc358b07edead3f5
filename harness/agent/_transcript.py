"""The durable transcript and its repair after a restart (seed 000 §2.2; DESIGN J5).

The transcript is a JSONL log of user messages, assistant messages with tool
calls (each call named by its turn id AND call id) and tool replies. After a
crash a call may have no reply. :func:`repair_transcript` gives each such call one
synthetic reply, matched by ``(turn_id, call_id)`` — never by counting turns,
which the seed's ``repairDanglingToolCalls`` gets wrong when a user message
arrives mid-turn. Replies already in the history are kept.

What the synthetic reply says depends on the journal:

* no record, or ``intent`` only / a ``*_before_execution`` outcome →
  TOOL_NOT_STARTED: it had no effect, issue it again if still needed;
* ``unknown_after_restart`` or ``timeout`` → TOOL_OUTCOME_UNKNOWN: inspect the
  real state first, do not repeat the operation;
* ``returned`` without a reply (only the result's hash survived) → unknown too:
  it ran, but what it returned is lost, so inspect.

Example::

    log = TranscriptLog.open(disk, "/state/transcript.jsonl")
    log.append_assistant("turn_1", [call])
    ...                                    # crash, restart, journal.recover()
    log.repair(journal)                    # one synthetic reply per dangling call
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from harness.agent._journal import NOT_STARTED_OUTCOMES, DurableLineFile, Execution
from harness.agent._tools import ToolReply, not_started_reply, unknown_reply
from harness.ports import Disk, ToolInvocation


@dataclass(frozen=True)
class UserMessage:
    text: str


@dataclass(frozen=True)
class AssistantTurn:
    """An assistant message and the tool calls it asked for, in the model's order."""

    turn_id: str
    calls: tuple[ToolInvocation, ...]
    text: str = ""


Entry = UserMessage | AssistantTurn | ToolReply


@dataclass(frozen=True)
class Transcript:
    """The entries in the order they were written.

    >>> call = ToolInvocation("t1", "c1", "send", {})
    >>> Transcript((AssistantTurn("t1", (call,)), UserMessage("hurry"))).dangling()
    [ToolInvocation(turn_id='t1', call_id='c1', tool='send', arguments={})]
    """

    entries: tuple[Entry, ...] = ()

    def calls(self) -> list[ToolInvocation]:
        return [c for e in self.entries if isinstance(e, AssistantTurn) for c in e.calls]

    def replies(self) -> dict[tuple[str, str], ToolReply]:
        """The first reply of each call, by ``(turn_id, call_id)``."""
        found: dict[tuple[str, str], ToolReply] = {}
        for entry in self.entries:
            if isinstance(entry, ToolReply):
                found.setdefault(entry.key, entry)
        return found

    def dangling(self) -> list[ToolInvocation]:
        """Calls without a reply, in the order they were asked for."""
        replied = self.replies()
        return [c for c in self.calls() if c.key not in replied]

    def messages(self) -> list[Entry]:
        """What the model sees: each assistant turn directly followed by its replies.

        A user message written while a turn's tools ran comes after those replies,
        as the providers require tool replies right after their tool calls.
        """
        replies = self.replies()
        out: list[Entry] = []
        for entry in self.entries:
            if isinstance(entry, AssistantTurn):
                out.append(entry)
                out.extend(replies[c.key] for c in entry.calls if c.key in replies)
            elif isinstance(entry, UserMessage):
                out.append(entry)
        return out


def synthetic_reply(call: ToolInvocation, execution: Execution | None) -> ToolReply:
    """The reply recovery gives a dangling ``call``, from its journal ``execution``.

    >>> synthetic_reply(ToolInvocation("t", "c", "send", {}), None).status
    'not_started'
    """
    if execution is None:
        return not_started_reply(call, "no journal record: the crash came first", synthetic=True)
    if execution.state == "intent" or execution.outcome in NOT_STARTED_OUTCOMES:
        return not_started_reply(
            call, execution.outcome or "interrupted_before_execution", synthetic=True
        )
    if execution.outcome == "returned":
        why = (
            f"it returned before the restart, but only the result's hash "
            f"{execution.result_sha256} was saved"
        )
        return unknown_reply(call, why, synthetic=True)
    return unknown_reply(call, execution.outcome or "unknown_after_restart", synthetic=True)


def repair_transcript(
    transcript: Transcript, lookup: Callable[[str, str], Execution | None]
) -> list[ToolReply]:
    """One synthetic reply per dangling call; ``lookup(turn_id, call_id)`` reads the journal.

    >>> repair_transcript(Transcript(), lambda turn, call: None)
    []
    """
    return [synthetic_reply(c, lookup(c.turn_id, c.call_id)) for c in transcript.dangling()]


def _encode(entry: Entry) -> bytes:
    if isinstance(entry, UserMessage):
        fields: dict[str, Any] = {"kind": "user", "text": entry.text}
    elif isinstance(entry, AssistantTurn):
        calls = [
            {"callId": c.call_id, "tool": c.tool, "arguments": c.arguments} for c in entry.calls
        ]
        fields = {"kind": "assistant", "turnId": entry.turn_id, "text": entry.text, "calls": calls}
    else:
        fields = {
            "kind": "tool_reply",
            "turnId": entry.turn_id,
            "callId": entry.call_id,
            "status": entry.status,
            "content": entry.content,
            "synthetic": entry.synthetic,
        }
    return json.dumps(fields, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def decode_entry(fields: Any) -> Entry:
    """Parse one transcript line; ``ValueError`` says what is wrong."""
    try:
        kind = fields["kind"]
        if kind == "user":
            return UserMessage(str(fields["text"]))
        if kind == "assistant":
            turn = str(fields["turnId"])
            calls = tuple(
                ToolInvocation(turn, str(c["callId"]), str(c["tool"]), dict(c["arguments"]))
                for c in fields["calls"]
            )
            return AssistantTurn(turn, calls, str(fields.get("text", "")))
        if kind == "tool_reply":
            return ToolReply(
                str(fields["turnId"]),
                str(fields["callId"]),
                fields["status"],
                fields["content"],
                bool(fields.get("synthetic", False)),
            )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"a transcript entry, missing or malformed {exc}") from exc
    raise ValueError(f"kind one of 'user', 'assistant', 'tool_reply', got {kind!r}")


class TranscriptLog:
    """The transcript on disk, appended durably like the journal (J2)."""

    def __init__(self, disk: Disk, path: str, *, root: str = "/") -> None:
        self.file = DurableLineFile(disk, path, root=root)
        self.transcript = Transcript()

    @classmethod
    def open(cls, disk: Disk, path: str, *, root: str = "/") -> TranscriptLog:
        log = cls(disk, path, root=root)
        entries = log.file.load(decode_entry, expected="a transcript entry")
        log.transcript = Transcript(tuple(entries))
        return log

    def append(self, entry: Entry) -> None:
        """Write ``entry`` durably, then add it to the in-memory transcript."""
        self.file.append(_encode(entry))
        self.transcript = Transcript((*self.transcript.entries, entry))

    def append_user(self, text: str) -> None:
        self.append(UserMessage(text))

    def append_assistant(
        self, turn_id: str, calls: Sequence[ToolInvocation], text: str = ""
    ) -> None:
        self.append(AssistantTurn(turn_id, tuple(calls), text))

    def append_replies(self, replies: Iterable[ToolReply]) -> None:
        for reply in replies:
            self.append(reply)

    def repair(self, lookup: Callable[[str, str], Execution | None]) -> list[ToolReply]:
        """Write a synthetic reply for every dangling call and return them (J5)."""
        replies = repair_transcript(self.transcript, lookup)
        self.append_replies(replies)
        return replies
