"""harness import reads every dialect, and keeps where an error, a reset and a cut came.

The captures are the fake provider's own answers, cut into reads here (the system
tier's ``test_round_trip.py`` records them through the proxy instead).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fakes import (
    ConnectionReset,
    ErrorInStream,
    FakeProvider,
    IncomingRequest,
    ScriptedResponse,
    ScriptedUsage,
    Text,
    ToolUse,
)
from harness.record import Chunk, Exchange, import_capture, write_exchange

ANSWER = ScriptedResponse((Text("Checking — 日本語 first."),
                           ToolUse("call_1", "lookup", {"q": "invoices"})),
                          "tool_calls", ScriptedUsage(20, 9), model="m-1")
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages",
         "openai-responses": "/v1/responses",
         "gemini": "/v1beta/models/m-1:streamGenerateContent"}
BODY: dict[str, Any] = {"model": "m-1", "stream": True, "max_tokens": 99,
                        "stream_options": {"include_usage": True}, "input": "go",
                        "messages": [{"role": "user", "content": "go"}],
                        "contents": [{"role": "user", "parts": [{"text": "go"}]}]}
FINISH = {"openai": b'"finish_reason":"', "anthropic": b'"stop_reason":"',
          "openai-responses": b'"type":"response.completed"', "gemini": b'"finishReason":"'}


def answer(dialect: str, faults: tuple[Any, ...] = (),
           response: ScriptedResponse = ANSWER) -> tuple[int, bytes]:
    provider = FakeProvider(dialect, response,  # type: ignore[arg-type]
                            faults={(1, 1): faults} if faults else None)
    plan = provider.plan(IncomingRequest("POST", provider.origin + PATHS[dialect], {},
                                         json.dumps(BODY).encode()))
    return plan.status, plan.body


def capture(tmp_path: Path, dialect: str, status: int, reads: list[bytes],
            ended: str = "eof") -> Path:
    chunks = tuple(Chunk(0.1 + i / 1000, r) for i, r in enumerate(reads))
    exchange = Exchange("POST", "https://api.example.com" + PATHS[dialect], (),
                        b"{}", status, (), chunks, 0.05, ended)  # type: ignore[arg-type]
    return write_exchange(exchange, tmp_path / f"{dialect}.json")


def events_before_finish(body: bytes) -> int:
    events = [e for e in body.split(b"\n\n") if b"data:" in e]
    return next(i for i, e in enumerate(events) if any(m in e for m in FINISH.values()))


@pytest.mark.parametrize("dialect", list(PATHS))
def test_every_dialects_stream_imports_as_its_answer(tmp_path: Path, dialect: str) -> None:
    _, body = answer(dialect)
    scenario = import_capture(capture(tmp_path, dialect, 200, [body])).scenario
    first = scenario.model[0]
    assert (scenario.dialect, scenario.provider.model) == (dialect, "m-1")
    assert first.text == "Checking — 日本語 first."
    assert [(c.tool, c.args) for c in first.calls] == [("lookup", {"q": "invoices"})]
    assert first.finish_reason == "tool_calls"
    assert scenario.faults == []


@pytest.mark.parametrize("dialect", list(PATHS))
def test_a_429_imports_in_its_own_dialect(tmp_path: Path, dialect: str) -> None:
    from fakes import HttpError

    status, body = answer(dialect, (HttpError(429, retry_after=7),))
    scenario = import_capture(capture(tmp_path, dialect, status, [body])).scenario
    assert scenario.dialect == dialect
    assert [f.kind for f in scenario.faults] == ["http_error"]


@pytest.mark.parametrize("dialect", list(PATHS))
@pytest.mark.parametrize("kind", ["error", "reset"])
def test_an_error_or_reset_before_the_finish_is_replayed_before_it(
        tmp_path: Path, dialect: str, kind: str) -> None:
    _, whole = answer(dialect)
    at = events_before_finish(whole)
    fault = ErrorInStream(after_events=at) if kind == "error" else \
        ConnectionReset(after_events=at)
    _, body = answer(dialect, (fault,))
    path = capture(tmp_path, dialect, 200, [body], "eof" if kind == "error" else "reset")
    scenario = import_capture(path).scenario
    [imported] = scenario.faults
    assert imported.fake_fields()["after_events"] == at
    # Replayed, the answer meets the error or reset before it says how it finishes.
    _, replay = answer(dialect, (type(fault)(after_events=at),),
                       ScriptedResponse(ANSWER.parts, "tool_calls", ANSWER.usage, "m-1"))
    assert not any(mark in replay for mark in FINISH.values())


@pytest.mark.parametrize("dialect", ["openai", "anthropic", "openai-responses"])
def test_cut_arguments_come_back_cut_as_captured(tmp_path: Path, dialect: str) -> None:
    from fakes import TruncatedToolArguments

    _, body = answer(dialect, (TruncatedToolArguments(offset=9),))
    scenario = import_capture(capture(tmp_path, dialect, 200, [body])).scenario
    [fault] = scenario.faults
    assert (fault.kind, fault.fake_fields()["offset"]) == ("truncated_tool_arguments", 9)
    assert scenario.model[0].calls[0].args == {"q": "inv"}  # '{"q":"inv' closed


@pytest.mark.parametrize("dialect", list(PATHS))
def test_a_read_split_inside_a_character_stays_inside_one(tmp_path: Path, dialect: str) -> None:
    _, body = answer(dialect)
    cut = body.index("日".encode()) + 1
    path = capture(tmp_path, dialect, 200, [body[:cut], body[cut:]])
    [fault] = import_capture(path).scenario.faults
    assert fault.kind == "split_at"
    [offset] = fault.fake_fields()["offsets"]
    assert offset == cut  # the same answer renders the same bytes: the very same place
