"""The dialect table: every dialect routes, reads and words its API as the API does."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fakes import (
    CacheConfig,
    FakeProvider,
    IncomingRequest,
    ScriptedResponse,
    ScriptedUsage,
    Text,
    ToolUse,
    chat_view,
)
from harness.agent import AGENT_DIALECTS
from harness.ports import DIALECTS, SPECS

REPLY = ScriptedResponse((Text("Done."),), "stop", ScriptedUsage(7, 7))
SYSTEM = " ".join(["abcd"] * 1300)  # 1,300 tokens
GEMINI = "https://gemini.fake.test/v1beta/models/fake-flash"
RESPONSES = "https://openai.fake.test/v1/responses"


def post(provider: FakeProvider, url: str, body: dict[str, Any]) -> tuple[int, bytes]:
    plan = provider.plan(IncomingRequest("POST", url, {}, json.dumps(body).encode()))
    return plan.status, plan.body


def datas(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in body.split(b"\n") if line.startswith(b"data: ")]


def test_every_dialect_has_one_entry_in_each_table() -> None:
    assert tuple(SPECS) == tuple(AGENT_DIALECTS) == DIALECTS
    assert len({(spec.host, spec.path) for spec in SPECS.values()}) == len(DIALECTS)


def test_a_responses_conversation_reads_as_chat_messages() -> None:
    body = {"model": "m", "instructions": "Be brief.", "input": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "Two calls."}]},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "c2", "name": "g", "arguments": '{"a":1}'},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        {"type": "function_call_output", "call_id": "c2", "output": "fine"}],
        "tools": [{"type": "function", "name": "f", "parameters": {}}]}
    view = chat_view("openai-responses", body)
    assert [m["role"] for m in view["messages"]] == ["system", "user", "assistant", "tool", "tool"]
    assert view["messages"][2]["content"] == "Two calls."
    assert [c["id"] for c in view["messages"][2]["tool_calls"]] == ["c1", "c2"]
    assert view["tools"] == [{"type": "function", "function": {"name": "f", "parameters": {}}}]


def test_a_gemini_conversation_reads_as_chat_messages_with_the_model_from_the_path() -> None:
    body = {"systemInstruction": {"parts": [{"text": "Be brief."}]}, "contents": [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "f", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "f",
                                                         "response": {"output": "ok"}}}]}]}
    view = chat_view("gemini", body, "fake-flash")
    assert view["model"] == "fake-flash"
    assert [(m["role"], m.get("tool_call_id")) for m in view["messages"]] == [
        ("system", None), ("user", None), ("assistant", None), ("tool", "c1")]
    assert view["messages"][3]["content"] == "ok"


def test_a_gemini_request_in_proto_field_names_reads_as_in_json_names() -> None:
    # litellm's gemini/ models send the proto names (system_instruction, function_call,
    # function_response, function_declarations), which the API takes as it takes the
    # JSON names; the caller's own data (args, response, a schema) keeps its keys.
    provider = FakeProvider("gemini", REPLY)
    status, _ = post(provider, GEMINI + ":streamGenerateContent?alt=sse", {
        "system_instruction": {"parts": [{"text": "Be brief."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            {"role": "model", "parts": [{"function_call": {
                "name": "f", "args": {"to_do": "x"}}}]},
            {"role": "user", "parts": [{"function_response": {
                "name": "f", "response": {"done_at": 1}}}]}],
        "tools": [{"function_declarations": [{"name": "f", "parameters": {
            "type": "object", "properties": {"to_do": {"type": "string"}}}}]}],
        "generation_config": {"max_output_tokens": 9}})
    assert status == 200
    seen = provider.requests[-1]
    assert seen.json is not None
    assert seen.json["generationConfig"] == {"maxOutputTokens": 9}
    chat = seen.chat or {}
    assert [(m["role"], m["content"]) for m in chat["messages"]] == [  # type: ignore[union-attr]
        ("system", "Be brief."), ("user", "go"), ("assistant", None),
        ("tool", '{"done_at": 1}')]
    call = chat["messages"][2]["tool_calls"][0]  # type: ignore[index]
    assert (call["function"]["name"], call["function"]["arguments"]) == ("f", '{"to_do":"x"}')
    assert chat["tools"] == [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"to_do": {"type": "string"}}}}}]
    assert (seen.turn, seen.attempt) == (2, 1)


def test_gemini_answers_on_both_paths_and_refuses_others() -> None:
    provider = FakeProvider("gemini", REPLY)
    contents = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    status, streamed = post(provider, GEMINI + ":streamGenerateContent?alt=sse", contents)
    assert status == 200
    assert datas(streamed)[-1]["candidates"][0]["finishReason"] == "STOP"
    status, whole = post(provider, GEMINI + ":generateContent", contents)
    assert status == 200
    assert json.loads(whole)["candidates"][0]["content"]["parts"] == [{"text": "Done."}]
    status, refused = post(provider, "https://gemini.fake.test/v1beta/models/x:countTokens",
                           contents)
    assert status == 404
    assert json.loads(refused)["error"]["status"] == "NOT_FOUND"


def test_turns_count_the_model_turns_of_each_shape() -> None:
    responses = FakeProvider("openai-responses", REPLY)
    post(responses, RESPONSES, {"model": "m", "stream": True, "input": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "Calling."},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"}]})
    assert (responses.requests[-1].turn, responses.requests[-1].attempt) == (2, 1)


@pytest.mark.parametrize(("dialect", "url", "body", "expected"), [
    ("openai-responses", RESPONSES,
     {"model": "m", "input": [
         {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}]},
     {"type": "invalid_request_error", "param": "input", "code": None,
      "message": "No tool output found for function call c1."}),
    ("gemini", GEMINI + ":streamGenerateContent?alt=sse",
     {"contents": [{"role": "model", "parts": [
         {"functionCall": {"id": "c1", "name": "f", "args": {}}}]}]},
     {"code": 400, "status": "INVALID_ARGUMENT",
      "message": "Please ensure that the number of function response parts is equal to the "
                 "number of function call parts of the function call turn."}),
])
def test_an_unanswered_call_gets_the_apis_400(dialect: str, url: str, body: dict[str, Any],
                                               expected: dict[str, Any]) -> None:
    provider = FakeProvider(dialect, REPLY)  # type: ignore[arg-type]
    status, answer = post(provider, url, body)
    error = json.loads(answer)["error"]
    # Each in the API's own words (Gemini's counts parts and names no id).
    assert status == 400
    assert {key: error[key] for key in expected} == expected


def test_a_gemini_function_response_without_an_id_answers_its_call_by_name() -> None:
    # google-genai's automatic function calling answers each functionCall with a
    # functionResponse that has its name and no id, even when the call had one: Gemini pairs
    # them by count and name, and takes the conversation.
    calls = {"role": "model", "parts": [
        {"functionCall": {"id": "c1", "name": "f", "args": {"a": 1}}},
        {"functionCall": {"id": "c2", "name": "g", "args": {}}},
        {"functionCall": {"id": "c3", "name": "f", "args": {"a": 2}}}]}
    replies = {"role": "user", "parts": [
        {"functionResponse": {"name": "f", "response": {"result": 1}}},
        {"functionResponse": {"name": "g", "response": {"result": 2}}},
        {"functionResponse": {"name": "f", "response": {"result": 3}}}]}
    body = {"contents": [{"role": "user", "parts": [{"text": "go"}]}, calls, replies]}
    view = chat_view("gemini", body, "fake-flash")
    assert [m.get("tool_call_id") for m in view["messages"][2:]] == ["c1", "c2", "c3"]
    status, answer = post(FakeProvider("gemini", REPLY), GEMINI + ":generateContent", body)
    assert status == 200, answer
    # A response naming no call of the turn still leaves that turn's call unanswered.
    replies["parts"] = [{"functionResponse": {"name": "h", "response": {}}}] * 3
    status, _ = post(FakeProvider("gemini", REPLY), GEMINI + ":generateContent", body)
    assert status == 400


def test_a_missing_conversation_names_the_dialects_field() -> None:
    status, answer = post(FakeProvider("gemini", REPLY), GEMINI + ":generateContent", {})
    assert status == 400
    assert json.loads(answer)["error"]["message"] == "contents: field required (a list)"


def test_responses_without_stream_answer_one_response_object() -> None:
    reply = ScriptedResponse((ToolUse("c1", "f", {"a": 1}),), "tool_calls", ScriptedUsage(9, 3))
    status, answer = post(FakeProvider("openai-responses", reply), RESPONSES,
                          {"model": "m", "input": "go"})
    response = json.loads(answer)
    assert status == 200
    assert (response["object"], response["status"]) == ("response", "completed")
    assert response["output"][0]["arguments"] == '{"a":1}'


def test_the_prompt_cache_reports_cached_tokens_in_each_new_dialect() -> None:
    responses = FakeProvider("openai-responses", REPLY, cache=CacheConfig())
    body = {"model": "fake-gpt", "stream": True, "instructions": SYSTEM, "input": "hi"}
    post(responses, RESPONSES, body)
    _, again = post(responses, RESPONSES, body)
    usage = datas(again)[-1]["response"]["usage"]
    assert usage["input_tokens_details"]["cached_tokens"] == 1280
    assert usage["input_tokens"] > 1280

    gemini = FakeProvider("gemini", REPLY, cache=CacheConfig())
    contents = {"systemInstruction": {"parts": [{"text": SYSTEM}]},
                "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    _, first = post(gemini, GEMINI + ":streamGenerateContent?alt=sse", contents)
    _, second = post(gemini, GEMINI + ":streamGenerateContent?alt=sse", contents)
    assert "cachedContentTokenCount" not in datas(first)[-1]["usageMetadata"]
    metadata = datas(second)[-1]["usageMetadata"]
    assert metadata["cachedContentTokenCount"] == 1280
    assert metadata["promptTokenCount"] > 1280
