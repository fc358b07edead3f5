"""The provider's pairing check reads each request from where the previous one left off.

:class:`fakes._pairing.PairingCheck` must give :func:`unpaired_calls_body`'s answer
for every conversation, whether it extends the previous one (the messages shared,
as the provider shares them), rewrites it, or shortens it; and when it extends it,
it reads only the new messages.
"""

from __future__ import annotations

import random

import pytest

from fakes._pairing import PairingCheck, unpaired_calls_body


class Counted(dict[str, object]):
    """A message that counts how often it is read."""

    reads = 0

    def get(self, key: str, default: object = None) -> object:
        Counted.reads += 1
        return super().get(key, default)


def _openai_turn(rng: random.Random, n: int) -> list[dict[str, object]]:
    ids = [f"call_{n}_{i}" for i in range(rng.randrange(3))]
    turn: list[dict[str, object]] = [
        {"role": "assistant", "content": "x", "tool_calls": [{"id": i} for i in ids]}]
    turn += [{"role": "tool", "tool_call_id": i} for i in ids if rng.random() < 0.9]
    if rng.random() < 0.3:
        turn.append({"role": "user", "content": "more"})
    return turn


def _anthropic_turn(rng: random.Random, n: int) -> list[dict[str, object]]:
    ids = [f"toolu_{n}_{i}" for i in range(rng.randrange(3))]
    turn: list[dict[str, object]] = [{"role": "assistant", "content": [
        {"type": "tool_use", "id": i} for i in ids]}]
    if ids or rng.random() < 0.5:
        turn.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": i} for i in ids if rng.random() < 0.9]})
    return turn


@pytest.mark.parametrize("family", ["openai", "anthropic"])
@pytest.mark.parametrize("seed", range(10))
def test_every_answer_is_the_full_checks(family: str, seed: int) -> None:
    rng = random.Random(seed)
    turn = _openai_turn if family == "openai" else _anthropic_turn
    check = PairingCheck(family)
    messages: list[dict[str, object]] = [{"role": "user", "content": "go"}]
    for n in range(60):
        roll = rng.random()
        if roll < 0.7 or not messages:
            messages = [*messages, *turn(rng, n)]  # the next request: the same messages, more
        elif roll < 0.85:
            messages = [dict(m) for m in messages[: rng.randrange(len(messages) + 1)]]
        else:  # an earlier message rewritten (a compaction), the rest the same objects
            at = rng.randrange(len(messages))
            messages = [*messages[:at], {"role": "user", "content": "summary"},
                        *messages[at + 1:]]
        expected = unpaired_calls_body(family, messages, f"req_{n}")
        assert check.unpaired_body(messages, f"req_{n}") == expected, (n, messages)
        if expected is None:
            assistants = sum(1 for m in messages if m.get("role") == "assistant")
            assert check.assistant_messages == assistants


def test_a_conversation_that_extends_the_last_one_is_read_only_where_it_is_new() -> None:
    check = PairingCheck("openai")
    messages: list[dict[str, object]] = [Counted(role="user", content="go")]
    reads = []
    for n in range(200):
        messages = [*messages,
                    Counted(role="assistant", tool_calls=[{"id": f"c{n}"}]),
                    Counted(role="tool", tool_call_id=f"c{n}")]
        Counted.reads = 0
        assert check.unpaired_body(messages, f"req_{n}") is None
        reads.append(Counted.reads)
    assert max(reads) == reads[1], reads  # the same few reads at turn 200 as at turn 2
