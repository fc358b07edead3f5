"""Anthropic's prompt cache across an agent's crash: the world's provider and cache outlive it.

A restarted agent rebuilds its history from its own files and sends it again to the same
provider (seed 002 §19.7). Rebuilt byte for byte, its first request reads what the crashed
process wrote at its last breakpoint and writes only the new tail; rebuilt with a tool
input's keys in another order, it is another prefix (Anthropic renders the input as sent);
left idle past the 5-minute lifetime on virtual time, it is the server's expiry.
"""

from __future__ import annotations

import json
from typing import Any

from fakes import (
    CacheConfig,
    FakeProvider,
    IncomingRequest,
    PromptCache,
    ScriptedResponse,
    ScriptedUsage,
    Text,
)

REPLY = ScriptedResponse((Text("Done."),), "stop", ScriptedUsage(7, 7))
PLAN = " ".join(["abcd"] * 1300)  # 1,300 tokens: the history is cacheable from the answer on
MARK = {"type": "ephemeral"}
MAIL = {"to": "ops@example.com", "body": "daily report: all green"}


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t


def history(mail: dict[str, str], *, answered: bool = False) -> dict[str, Any]:
    """The report's request as the reference agent marks it: last tool, newest block."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "Write the daily report."}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": PLAN},
            {"type": "tool_use", "id": "toolu_1", "name": "mail", "input": mail}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sent"}]},
    ]
    if answered:
        messages += [
            {"role": "assistant", "content": [{"type": "text", "text": "Checked the outbox."}]},
            {"role": "user", "content": [{"type": "text", "text": "Go on."}]},
        ]
    messages[-1]["content"][-1] = {**messages[-1]["content"][-1], "cache_control": MARK}
    tool = {"name": "mail", "input_schema": {"type": "object"}, "cache_control": MARK}
    return {"model": "fake-sonnet", "max_tokens": 100, "stream": True, "tools": [tool],
            "messages": messages}


def usage_of(provider: FakeProvider, body: dict[str, Any]) -> dict[str, int]:
    plan = provider.plan(IncomingRequest("POST", provider.endpoint, {}, json.dumps(body).encode()))
    assert plan.status == 200
    frames = [line[len(b"data: "):] for line in plan.body.split(b"\n")
              if line.startswith(b"data: ")]
    start = next(e for e in map(json.loads, frames) if e["type"] == "message_start")
    usage: dict[str, int] = start["message"]["usage"]
    return usage


def world() -> tuple[FakeProvider, Clock]:
    clock = Clock()
    cache = PromptCache("anthropic", CacheConfig(), clock=clock.now)
    return FakeProvider("anthropic", REPLY, cache=cache), clock


def test_a_rebuilt_history_reads_what_the_crashed_process_wrote_and_writes_the_tail() -> None:
    provider, clock = world()
    before = usage_of(provider, history(MAIL))
    clock.t = 120.0  # the crash, the restart, the recovery: well inside five minutes
    after = usage_of(provider, history(dict(MAIL), answered=True))
    written = before["cache_creation_input_tokens"]
    assert (before["cache_read_input_tokens"], before["input_tokens"]) == (0, 0)
    assert written > 1024
    tail = provider.requests[-1].cache
    assert tail is not None
    assert tail.miss is None
    assert after["cache_read_input_tokens"] == written
    assert after["cache_creation_input_tokens"] == tail.input_tokens - written > 0
    assert after["input_tokens"] == 0  # the newest block is marked: nothing left uncached


def test_a_tool_input_rebuilt_with_its_keys_in_another_order_is_a_changed_prefix() -> None:
    provider, _ = world()
    usage_of(provider, history(MAIL))
    # As a log that keeps arguments as canonical JSON gives them back: the same values.
    resorted = dict(sorted(MAIL.items()))
    assert resorted == MAIL
    assert list(resorted) != list(MAIL)
    again = usage_of(provider, history(resorted))
    outcome = provider.requests[-1].cache
    assert outcome is not None
    assert outcome.miss == "prefix_changed:history"
    assert again["cache_read_input_tokens"] == 0
    assert again["cache_creation_input_tokens"] == outcome.input_tokens


def test_the_prefix_a_crash_left_expires_five_idle_minutes_on() -> None:
    provider, clock = world()
    usage_of(provider, history(MAIL))
    clock.t = 299.0
    assert usage_of(provider, history(MAIL))["cache_read_input_tokens"] > 0
    clock.t = 299.0 + 300.0  # the read refreshed it; five idle minutes from there
    expired = usage_of(provider, history(MAIL))
    outcome = provider.requests[-1].cache
    assert outcome is not None
    assert outcome.miss == "ttl_expired"
    assert expired["cache_read_input_tokens"] == 0
