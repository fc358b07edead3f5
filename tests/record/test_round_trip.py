"""record → import → run, for every dialect and fault family, with the same verdicts.

Each case is a scenario whose first answer meets one fault (a stall, read splits, a
429, arguments cut at the output limit, a reset). ``harness serve`` plays it; a
client asks for turn 1 through ``harness record``'s proxy, which keeps the exchange;
``harness import`` turns the capture back into a scenario. The imported scenario
must hold the same fault at the same place, and the reference agent run on it must
get the same verdicts as on the scenario it was recorded from.

The server runs at 1/50 of real time, so the capture's times are multiplied back
before the import (a 60 s stall is recorded as 1.2 s).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from fakes import FakeProvider, IncomingRequest
from harness.record import RecordingProxy, import_capture, load_capture, write_exchange
from harness.runner import Case, ScriptedModel, run_case
from harness.scenario import Scenario, load_scenario
from harness.serve import serving

pytestmark = pytest.mark.system

SCALE = 0.02
MODEL = "m-1"
TEXT = "Je vérifie l'état — 日本語 ok, then I look it up."
FAULTS: dict[str, dict[str, Any]] = {
    "stall": {"kind": "stall", "after_events": 3, "seconds": 60},
    "split": {"kind": "split_inside_utf8", "occurrence": 2},
    "429": {"kind": "http_error", "status": 429, "retry_after": 7},
    "truncation": {"kind": "truncated_tool_arguments", "offset": 8},
    # after_events: set per dialect, right before the event that says how the answer ends
    "reset": {"kind": "connection_reset"},
}
#: What each dialect's event that ends an answer says (a finish reason, a terminal event).
FINISH_MARKS = ('"finish_reason":"', '"stop_reason":"', '"type":"response.completed"',
                '"finishReason":"')
DIALECTS = ["openai", "anthropic", "openai-responses", "gemini"]


#: What an error answer leaves of the model's turn: nothing; the import says so in its text.
AFTER_ERROR = "(an answer after the captured error)"


def scenario(folder: Path, dialect: str, family: str) -> Scenario:
    """The scenario recorded from; a 429 carries no answer, so its turn is what the import
    writes for one (the capture cannot hold what the model never sent)."""
    fault = {"at": {"turn": 1, "attempt": 1}, **FAULTS[family]}
    first = f'text: {json.dumps(AFTER_ERROR)}' if family == "429" else \
        f'text: {json.dumps(TEXT)}\n    calls: [{{tool: lookup, args: {{q: "invoices 2024"}}}}]'
    if (dialect, family) == ("gemini", "truncation"):
        # Gemini never streams a call it cannot parse: a cut answer is its text and MAX_TOKENS.
        first, fault = f"text: {json.dumps(TEXT)}\n    finish: length", {}
    if family == "reset":
        fault["after_events"] = events_before_the_finish(folder, dialect, first)
    faults = json.dumps([fault] if fault else [])
    text = f"""
name: trip-{dialect}-{family}
dialect: {dialect}
seed: 0
tools: {{lookup: {{kind: read}}}}
provider: {{model: {MODEL}}}
model:
  - turn: 1
    {first}
  - turn: 2
    text: "(the capture ends before the model's next turn)"
faults: {faults}
expect: {{stop_state: complete}}
"""
    path = folder / f"{dialect}-{family}.yaml"
    path.write_text(text, encoding="utf-8")
    return load_scenario(path)


def events_before_the_finish(folder: Path, dialect: str, first: str) -> int:
    """How many events of turn 1's stream come before the one that says how it ends."""
    plain = folder / f"{dialect}-plain.yaml"
    plain.write_text(f"name: plain\ndialect: {dialect}\ntools: {{lookup: {{kind: read}}}}\n"
                     f"model:\n  - turn: 1\n    {first}\nexpect: {{stop_state: complete}}\n",
                     encoding="utf-8")
    loaded = load_scenario(plain)
    provider = FakeProvider(dialect, ScriptedModel(loaded).respond)  # type: ignore[arg-type]
    path, body = request(dialect)
    answer = provider.plan(IncomingRequest("POST", provider.origin + path.split("?")[0], {},
                                           json.dumps(body).encode()))
    events = [e for e in answer.body.decode().split("\n\n") if "data:" in e]
    return next(i for i, e in enumerate(events) if any(m in e for m in FINISH_MARKS))


def request(dialect: str) -> tuple[str, dict[str, Any]]:
    """Turn 1 as a client of the dialect asks for it, streamed."""
    said = [{"role": "user", "content": "look up the invoices"}]
    if dialect == "openai":
        return "/v1/chat/completions", {"model": MODEL, "stream": True, "messages": said,
                                        "stream_options": {"include_usage": True}}
    if dialect == "anthropic":
        return "/v1/messages", {"model": MODEL, "stream": True, "max_tokens": 1024,
                                "messages": said}
    if dialect == "openai-responses":
        return "/v1/responses", {"model": MODEL, "stream": True, "input": said}
    return (f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse",
            {"contents": [{"role": "user", "parts": [{"text": said[0]["content"]}]}]})


def record(loaded: Scenario, dialect: str, folder: Path) -> Path:
    """Serve the scenario, ask for turn 1 through the recording proxy; the capture's path."""
    path, body = request(dialect)
    with serving([loaded], time_scale=SCALE) as served, \
            RecordingProxy(served.url, folder) as proxy, \
            httpx.Client(base_url=proxy.url, timeout=30) as client:
        try:
            with client.stream("POST", path, json=body) as answer:
                for _ in answer.iter_raw():
                    pass
        except httpx.TransportError:
            pass  # the reset, as the client meets it
    [written] = proxy.written
    return written


def unscaled(path: Path) -> Path:
    """The capture with its times as the scenario means them (the server ran scaled)."""
    capture = load_capture(path).exchange
    chunks = tuple(dataclasses.replace(c, at=c.at / SCALE) for c in capture.chunks)
    # The server said its waits in scaled time too (Retry-After: 7 went out as 0.14).
    headers = tuple((name, _unscaled_wait(name, value)) for name, value in capture.response_headers)
    whole = dataclasses.replace(capture, chunks=chunks, headers_at=capture.headers_at / SCALE,
                                response_headers=headers)
    return write_exchange(whole, path.with_name("unscaled-" + path.name))


def _unscaled_wait(name: str, value: str) -> str:
    if name.lower() in ("retry-after", "retry-after-ms"):
        try:
            return f"{float(value) / SCALE:g}"
        except ValueError:
            return value  # an HTTP date: left as it is
    return value


def verdicts(loaded: Scenario, path: Path) -> list[tuple[str, str]]:
    result = run_case(Case(loaded.name, path, loaded.seed), loaded)
    return [(v.invariant, v.status) for v in result.verdicts]


@pytest.mark.parametrize("family", list(FAULTS))
@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_capture_imports_to_the_same_fault_and_verdicts(tmp_path: Path, dialect: str,
                                                          family: str) -> None:
    original = scenario(tmp_path, dialect, family)
    imported_path = tmp_path / "imported.yaml"
    imported = import_capture(unscaled(record(original, dialect, tmp_path / "captures")),
                              stall_seconds=20.0)
    imported_path.write_text(imported.text, encoding="utf-8")
    loaded = load_scenario(imported_path)

    assert loaded.dialect == dialect
    assert [f.kind for f in loaded.faults] == expected_kinds(dialect, family), imported.text
    first = loaded.model[0]
    if family == "429":
        assert (first.text, first.calls) == (AFTER_ERROR, [])
    elif (dialect, family) == ("gemini", "truncation"):
        assert (first.text, first.calls, first.finish) == (TEXT, [], "length")
    else:
        assert first.text == TEXT
        assert [(c.tool, c.args) for c in first.calls] == \
            [("lookup", {"q": "in"} if family == "truncation" else {"q": "invoices 2024"})]
    if family == "reset":  # the reset where the capture broke: before the finish, not after
        assert loaded.faults[0].fake_fields()["after_events"] == \
            original.faults[0].fake_fields()["after_events"]
    assert verdicts(loaded, imported_path) == verdicts(original, tmp_path / "original.yaml")


def expected_kinds(dialect: str, family: str) -> list[str]:
    if (dialect, family) == ("gemini", "truncation"):
        return []
    return {"stall": ["stall"], "split": ["split_at"], "429": ["http_error"],
            "truncation": ["truncated_tool_arguments"], "reset": ["connection_reset"]}[family]
