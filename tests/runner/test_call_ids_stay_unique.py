"""A model never gives two calls one id, even when the client leaves the first one out.

Google ADK keeps every event in its session and, rebuilding a request from it after a
crash, drops a function call that has no response (the one the crash cut off). Turn 1
is then answered again; with the dropped call's id the client paired its old call with
the new call's response and sent Gemini a history it refuses (400), which no real
model, whose ids are never reused, would bring about. The new id keeps the first as its
stem, so I3 still sees the same call run again. The same holds for a call an earlier
incarnation got whole and never ran, when the restart asks its turn with another
conversation (ADK's restart appends the prompt again): only a request sent again word
for word gets its answer's ids again.
"""

from __future__ import annotations

from typing import Any

from fakes import ProviderRequest, ToolUse
from harness.checks._invariants import call_stem
from harness.runner import ScriptedModel
from harness.scenario import Scenario

USER = {"role": "user", "content": "Mail ops."}


def scenario() -> Scenario:
    return Scenario(
        name="mail", dialect="openai", tools={"mail": {"kind": "send"}},
        model=[{"turn": 1, "calls": [{"tool": "mail", "args": {"to": "ops@example.com"}}]},
               {"turn": 2, "text": "Sent."}],
        expect={"stop_state": "complete"})


def ask(model: ScriptedModel, turn: int, messages: list[Any]) -> list[str]:
    chat = {"model": "gpt-4o-mini", "messages": messages}
    request = ProviderRequest("POST", "https://openai.fake.test/v1/chat/completions", {},
                              chat, turn, 1, chat=chat)
    return [part.call_id for part in model.respond(request).parts
            if isinstance(part, ToolUse)]


def test_a_turn_answered_again_after_a_restart_that_dropped_its_run_call_gets_a_new_id(
        ) -> None:
    ran: set[str] = set()
    model = ScriptedModel(scenario(), ran_before=lambda: ran)
    assert ask(model, 1, [USER]) == ["call_t1_0"]
    ran.add("call_t1_0")  # incarnation 1 ran it, then crashed before sending its result
    # The restart's request leaves the call out: turn 1 again, with an id of its own
    # whose stem is the first one's.
    again = ask(model, 1, [USER, USER])
    assert again == ["call_t1_0_r1"]
    assert call_stem(again[0]) == "call_t1_0"


def test_a_turn_answered_again_before_any_run_keeps_its_id() -> None:
    model = ScriptedModel(scenario(), ran_before=set)
    assert ask(model, 1, [USER]) == ["call_t1_0"]
    # A stalled answer retried, or a restart before the call ran: the same request gets
    # the same ids, as ever.
    assert ask(model, 1, [USER]) == ["call_t1_0"]


def test_a_turn_asked_again_with_another_conversation_gets_a_new_id_though_nothing_ran(
        ) -> None:
    got: dict[str, list[list[Any]]] = {}
    model = ScriptedModel(scenario(), ran_before=set, answered_before=lambda: got)
    assert ask(model, 1, [USER]) == ["call_t1_0"]
    got["call_t1_0"] = [[USER]]  # incarnation 1 got it whole, then crashed before the run
    # Sent again word for word, the request gets its answer again, ids and all.
    assert ask(model, 1, [USER]) == ["call_t1_0"]
    # The restart asks turn 1 with the prompt again: a new question, and a real model's
    # call on it has an id never given before (the client may hold the first call).
    again = ask(model, 1, [USER, USER])
    assert again == ["call_t1_0_r1"]
    assert call_stem(again[0]) == "call_t1_0"
    got["call_t1_0_r1"] = [[USER, USER]]
    assert ask(model, 1, [USER, USER, USER]) == ["call_t1_0_r2"]
