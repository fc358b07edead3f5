"""Tool calls a framework keeps as text (smolagents) are read as calls by the harness."""

from __future__ import annotations

from typing import Any

from harness.runner._model import last_tool_results
from harness.runner._observed import observed_transcript
from harness.runner._text_calls import with_text_tool_calls

CALL = ("Calling tools:\n[{'id': 'call_t1_0', 'type': 'function', 'function': {'name': "
        "'send_mail', 'arguments': {'to': 'ops@example.com', 'body': 'deploy 42'}}}]")


def smolagents_conversation(reply: str) -> list[dict[str, Any]]:
    """What smolagents' ToolCallingAgent sends on its second step (its memory as messages)."""
    return [
        {"role": "system", "content": [{"type": "text", "text": "You are an expert assistant."}]},
        {"role": "user", "content": [{"type": "text", "text": "New task:\nMail ops."}]},
        {"role": "assistant", "content": [{"type": "text", "text": CALL}]},
        {"role": "user", "content": [{"type": "text", "text": reply}]},
    ]


def test_the_scripted_model_sees_the_result_of_a_call_kept_as_text() -> None:
    messages = with_text_tool_calls(smolagents_conversation("Observation:\n{'sent': True}"))
    results = last_tool_results("openai", messages)
    assert [(r.tool, r.outcome) for r in results] == [("send_mail", "ok")]


def test_an_error_kept_as_text_is_a_failed_call() -> None:
    reply = ("Call id: call_t1_0\nError:\nError executing tool 'send_mail' with arguments "
             "{}: TypeError: send_mail() missing a required argument: 'to'\n"
             "Now let's retry: take care not to repeat previous errors!")
    results = last_tool_results("openai", with_text_tool_calls(smolagents_conversation(reply)))
    assert [(r.tool, r.outcome) for r in results] == [("send_mail", "error")]


def test_a_call_that_could_not_be_made_is_a_failed_call_of_the_tool_its_error_names() -> None:
    """Arguments cut at the output limit no longer parse: smolagents keeps no call, only
    an empty assistant step and the error, so a ``when: {tool, outcome: error}`` branch
    never matched and the scripted model went on as if nothing had failed."""
    messages = smolagents_conversation(
        "Error:\nError executing tool 'send_mail' with arguments {\"to\":\"ops@exa: "
        "TypeError: SendMail.forward() missing 1 required positional argument: 'body'\n"
        "Now let's retry: take care not to repeat previous errors!")
    messages[2] = {"role": "assistant", "content": [{"type": "text", "text": ""}]}
    results = last_tool_results("openai", with_text_tool_calls(messages))
    assert [(r.tool, r.outcome) for r in results] == [("send_mail", "error")]
    # A user's own words after a step with no call are no tool's reply.
    messages[3] = {"role": "user", "content": "Error: the printer is out of paper."}
    assert last_tool_results("openai", with_text_tool_calls(messages)) == []


def test_the_observed_transcript_pairs_text_calls_with_their_replies() -> None:
    body = {"messages": smolagents_conversation("Observation:\n{'sent': True}")}
    transcript = observed_transcript("openai", body)
    # The system prompt is not part of a transcript.
    assert [(m.role, m.call_id) for m in transcript] == [
        ("user", None), ("assistant", None), ("tool", "call_t1_0")]
    assert [c.name for c in transcript[1].tool_calls] == ["send_mail"]


def test_ordinary_conversations_are_left_alone() -> None:
    messages = [{"role": "user", "content": "Calling tools:\nnot an assistant"},
                {"role": "assistant", "content": "Observation: plain text"}]
    assert with_text_tool_calls(messages) == messages
    broken = [{"role": "assistant", "content": "Calling tools:\n[{'id': "}]
    assert with_text_tool_calls(broken) == broken


def test_a_failed_call_told_after_the_task_is_read_when_no_assistant_message_came() -> None:
    # smolagents drops the model's cut call and writes the step's error after the task, in
    # the one user message: the conversation has no assistant message, and the request
    # asks the next turn, whose `when: {outcome: error}` branch must see the failure.
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "You are an expert."}]},
        {"role": "user", "content": [{"type": "text", "text": (
            "New task:\nMail ops.\nError:\nError executing tool 'send_mail' with arguments "
            "{\"to\":\"ops@example.com\",\"subject\":\"de: TypeError: send_mail() missing "
            "a required argument: 'subject'\nPlease try again or use another tool\n"
            "Now let's retry: take care not to repeat previous errors!\n")}]},
    ]
    assert [(r.tool, r.outcome) for r in last_tool_results("openai", messages)] == [
        ("send_mail", "error")]
    asked = {"role": "user", "content": "New task:\nMail ops."}
    assert last_tool_results("openai", [messages[0], asked]) == []
