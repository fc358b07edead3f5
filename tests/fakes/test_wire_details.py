"""Wire details as the real APIs send them.

Gemini's in-stream ``UNAVAILABLE`` is a 503; the 400 for a tool call without its
result is worded as each API words it; the requested model is echoed back;
Anthropic's tool ids are ``toolu_…``; ``/v1/models`` and embeddings are served,
the vectors deterministic (a seeded hash of the input).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest
from google.genai import errors as genai_errors

from fakes import FakeProvider, IncomingRequest, ScriptedResponse, ScriptedUsage, Text
from fakes._wire_gemini import stream_error_frame
from harness.intercept import PROVIDER_ENVIRONMENT
from harness.runner import ScriptedModel
from harness.scenario import parse_scenario

DONE = ScriptedResponse((Text("Done."),), "stop", ScriptedUsage(9, 2))
RESPONSES = "https://openai.fake.test/v1/responses"
GEMINI = "https://gemini.fake.test/v1beta/models/gemini-2.5-flash:generateContent"


def plan(provider: FakeProvider, method: str, url: str, body: object = None) -> Any:
    raw = b"" if body is None else json.dumps(body).encode()
    return provider.plan(IncomingRequest(method, url, {}, raw))


def test_gemini_in_stream_unavailable_is_503_as_google_rpc_maps_it() -> None:
    frame = stream_error_frame("overloaded", "UNAVAILABLE", 3)
    assert frame.data is not None
    assert json.loads(frame.data)["error"]["code"] == 503
    # The SDK raises a server error with that code for the error inside the stream.
    assert genai_errors.APIError(503, json.loads(frame.data)).code == 503


def test_responses_words_a_missing_tool_output_as_the_responses_api() -> None:
    provider = FakeProvider("openai-responses", DONE)
    answer = plan(provider, "POST", RESPONSES, {"model": "m", "input": [
        {"role": "user", "content": "go"},
        {"type": "function_call", "call_id": "call_9", "name": "mail", "arguments": "{}"},
        {"role": "user", "content": "and?"}]})
    assert answer.status == 400
    assert json.loads(answer.body) == {"error": {
        "message": "No tool output found for function call call_9.",
        "type": "invalid_request_error", "param": "input", "code": None}}


def test_gemini_words_a_missing_function_response_as_gemini() -> None:
    provider = FakeProvider("gemini", DONE)
    answer = plan(provider, "POST", GEMINI, {"contents": [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "mail", "args": {}}}]},
        {"role": "user", "parts": [{"text": "and?"}]}]})
    assert answer.status == 400
    error = json.loads(answer.body)["error"]
    assert (error["code"], error["status"]) == (400, "INVALID_ARGUMENT")
    assert "number of function response parts" in error["message"]
    assert "tool_call" not in error["message"]  # not Chat Completions' words


@pytest.mark.parametrize(("dialect", "url", "body", "read"), [
    ("openai", "https://openai.fake.test/v1/chat/completions",
     {"model": "gpt-4o", "messages": [{"role": "user", "content": "go"}]},
     lambda b: b["model"]),
    ("anthropic", "https://anthropic.fake.test/v1/messages",
     {"model": "claude-sonnet-4-5", "max_tokens": 9,
      "messages": [{"role": "user", "content": "go"}]}, lambda b: b["model"]),
    ("openai-responses", RESPONSES, {"model": "gpt-4.1", "input": "go"},
     lambda b: b["model"]),
    ("gemini", GEMINI, {"contents": [{"role": "user", "parts": [{"text": "go"}]}]},
     lambda b: b["modelVersion"]),
])
def test_the_requested_model_is_echoed_back(dialect: str, url: str, body: dict[str, Any],
                                            read: Any) -> None:
    answer = plan(FakeProvider(dialect, DONE), "POST", url, body)  # type: ignore[arg-type]
    assert answer.status == 200
    wanted = "gemini-2.5-flash" if dialect == "gemini" else body["model"]
    assert read(json.loads(answer.body)) == wanted


def test_a_responder_that_names_its_model_keeps_it() -> None:
    named = ScriptedResponse((Text("x"),), "stop", ScriptedUsage(1, 1), model="fixed")
    answer = plan(FakeProvider("openai-responses", named), "POST", RESPONSES,
                  {"model": "gpt-4.1", "input": "go"})
    assert json.loads(answer.body)["model"] == "fixed"


def test_anthropic_tool_ids_begin_with_toolu() -> None:
    def scripted(dialect: str) -> list[str]:
        scenario = parse_scenario(
            f"name: ids\ndialect: {dialect}\ntools: {{mail: {{kind: send}}}}\nmodel:\n"
            "  - {turn: 1, calls: [{tool: mail, args: {}}]}\nexpect: {stop_state: complete}\n"
            .encode(), "ids.yaml")
        provider = FakeProvider(dialect, ScriptedModel(scenario).respond)  # type: ignore[arg-type]
        request = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "g"}]}
        answer = plan(provider, "POST", provider.endpoint, request)
        body = json.loads(answer.body)
        if dialect == "anthropic":
            return [b["id"] for b in body["content"] if b["type"] == "tool_use"]
        return [c["id"] for c in body["choices"][0]["message"]["tool_calls"]]

    assert scripted("anthropic") == ["toolu_t1_0"]
    assert scripted("openai") == ["call_t1_0"]


@pytest.mark.parametrize(("dialect", "url", "names"), [
    ("openai", "https://openai.fake.test/v1/models", lambda b: [m["id"] for m in b["data"]]),
    ("anthropic", "https://anthropic.fake.test/v1/models",
     lambda b: [m["id"] for m in b["data"]]),
    ("gemini", "https://gemini.fake.test/v1beta/models",
     lambda b: [m["name"] for m in b["models"]]),
])
def test_the_models_are_listed_in_each_apis_shape(dialect: str, url: str, names: Any) -> None:
    provider = FakeProvider(dialect, DONE, models=("the-model",))  # type: ignore[arg-type]
    answer = plan(provider, "GET", url)
    assert answer.status == 200
    assert names(json.loads(answer.body)) == \
        (["models/the-model"] if dialect == "gemini" else ["the-model"])


def test_embeddings_are_deterministic_unit_vectors_through_the_sdk() -> None:
    from fakes import VirtualClock
    from tests.fakes.test_sdk_crosscheck import openai_client

    async def embed(seed: int, texts: list[str], **extra: Any) -> list[list[float]]:
        client: openai.AsyncOpenAI = openai_client(FakeProvider("openai", DONE, seed=seed))
        answer = await client.embeddings.create(model="text-embedding-3-small", input=texts,
                                                **extra)
        return [item.embedding for item in answer.data]

    clock = VirtualClock()
    first = clock.run(embed(1, ["alpha", "beta"]))
    again = clock.run(embed(1, ["alpha", "beta"]))
    other_seed = clock.run(embed(2, ["alpha"]))
    assert first == again
    assert len(first[0]) == 1536
    assert first[0] != first[1]
    assert other_seed[0] != first[0]
    assert abs(sum(v * v for v in first[0]) - 1.0) < 1e-5
    assert len(clock.run(embed(1, ["alpha"], dimensions=256))[0]) == 256


def test_gemini_embed_content_answers_values() -> None:
    provider = FakeProvider("gemini", DONE)
    url = "https://gemini.fake.test/v1beta/models/text-embedding-004:embedContent"
    answer = plan(provider, "POST", url, {"content": {"parts": [{"text": "hi"}]},
                                          "outputDimensionality": 8})
    assert answer.status == 200
    assert len(json.loads(answer.body)["embedding"]["values"]) == 8


def test_a_bad_embeddings_request_is_a_400_that_says_what_to_send() -> None:
    answer = plan(FakeProvider("openai", DONE), "POST", "https://openai.fake.test/v1/embeddings",
                  {"model": "m", "input": "x", "dimensions": 0})
    assert answer.status == 400
    assert "'dimensions' must be an integer from 1 to 3072" in \
        json.loads(answer.body)["error"]["message"]


def test_google_genai_embeds_through_the_interception(tmp_path: Path) -> None:
    from google import genai

    from tests.fakes.test_stateful_responses import in_process_world

    scenario = parse_scenario(b"name: e\ndialect: gemini\nmodel: [{turn: 1, text: hi}]\n"
                              b"expect: {stop_state: complete}\n", "e.yaml")
    with in_process_world(scenario):
        client = genai.Client(api_key="k", http_options={
            "base_url": PROVIDER_ENVIRONMENT["GOOGLE_GEMINI_BASE_URL"]})
        first = client.models.embed_content(model="text-embedding-004",
                                            contents=["alpha", "beta"])
        again = client.models.embed_content(model="text-embedding-004", contents=["alpha"])
    assert first.embeddings is not None
    assert again.embeddings is not None
    assert len(first.embeddings) == 2
    assert first.embeddings[0].values == again.embeddings[0].values
    assert first.embeddings[0].values != first.embeddings[1].values
