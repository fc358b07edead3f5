"""Transcript repair (J5): matched by turn id AND call id, replies kept, unknowns say inspect."""

from __future__ import annotations

from fakes import CrashDisk
from harness.agent._journal import Execution
from harness.agent._tools import ToolReply
from harness.agent._transcript import (
    AssistantTurn,
    Transcript,
    TranscriptLog,
    UserMessage,
    repair_transcript,
)
from harness.ports import ToolInvocation


def _call(turn: str, call: str) -> ToolInvocation:
    return ToolInvocation(turn, call, "append", {"text": call})


def _execution(turn: str, call: str, state: str, outcome: str | None) -> Execution:
    return Execution("exec_1", call, turn, "append", "ab", state, outcome, "cd")  # type: ignore[arg-type]


def test_a_user_message_mid_turn_does_not_shift_the_match() -> None:
    # The seed counts turns; a user message that arrives while turn 1's tools run
    # would make it attach turn 2's outcome to turn 1. Ids cannot be fooled.
    a1, b1 = _call("turn_1", "call_a"), _call("turn_1", "call_b")
    c2 = _call("turn_2", "call_a")  # same call id, another turn
    transcript = Transcript(
        (
            AssistantTurn("turn_1", (a1, b1)),
            ToolReply("turn_1", "call_a", "ok", {"done": 1}),
            UserMessage("also do the other thing"),
            AssistantTurn("turn_2", (c2,)),
        )
    )
    journal = {
        ("turn_1", "call_b"): _execution("turn_1", "call_b", "result", "unknown_after_restart"),
        ("turn_2", "call_a"): _execution("turn_2", "call_a", "intent", None),
    }
    replies = repair_transcript(transcript, lambda t, c: journal.get((t, c)))
    assert [(r.key, r.status) for r in replies] == [
        (("turn_1", "call_b"), "unknown"),
        (("turn_2", "call_a"), "not_started"),
    ]


def test_unknown_says_inspect_first_and_do_not_repeat() -> None:
    [reply] = repair_transcript(
        Transcript((AssistantTurn("t", (_call("t", "c"),)),)),
        lambda t, c: _execution(t, c, "result", "unknown_after_restart"),
    )
    assert reply.content["error"] == "TOOL_OUTCOME_UNKNOWN"
    assert "Inspect the real state first" in reply.content["message"]
    assert "do not repeat the operation" in reply.content["message"]


def test_returned_without_a_reply_asks_to_inspect_and_names_the_hash() -> None:
    [reply] = repair_transcript(
        Transcript((AssistantTurn("t", (_call("t", "c"),)),)),
        lambda t, c: _execution(t, c, "result", "returned"),
    )
    assert reply.status == "unknown"
    assert "only the result's hash cd was saved" in reply.content["message"]


def test_replies_in_the_history_are_kept() -> None:
    call = _call("t", "c")
    existing = ToolReply("t", "c", "ok", {"real": "result"})
    transcript = Transcript((AssistantTurn("t", (call,)), existing))
    assert repair_transcript(transcript, lambda t, c: None) == []


def test_messages_put_replies_right_after_their_turn_in_call_order() -> None:
    a, b = _call("t", "a"), _call("t", "b")
    transcript = Transcript(
        (
            AssistantTurn("t", (a, b)),
            UserMessage("mid-turn"),
            ToolReply("t", "b", "ok", 2),
            ToolReply("t", "a", "ok", 1),
        )
    )
    kinds = [getattr(e, "call_id", type(e).__name__) for e in transcript.messages()]
    assert kinds == ["AssistantTurn", "a", "b", "UserMessage"]


def test_the_log_round_trips_and_repair_is_durable_and_idempotent() -> None:
    disk = CrashDisk()
    log = TranscriptLog.open(disk.view(), "/s/transcript.jsonl")
    log.append_user("hello")
    log.append_assistant("t", [_call("t", "c")])
    assert len(log.repair(lambda t, c: None)) == 1
    disk.restart()
    again = TranscriptLog.open(disk.view(), "/s/transcript.jsonl")
    assert again.transcript == log.transcript
    assert again.repair(lambda t, c: None) == []
