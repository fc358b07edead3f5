"""harness import: committed captures become scenarios that validate and run; bad ones exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import CaptureError
from harness._cli import main
from harness.record import Chunk, Exchange, import_capture, write_exchange
from harness.runner import Case, run_case
from harness.scenario import load_scenario

DATA = Path(__file__).parent / "data"


def test_an_openai_stream_becomes_its_tool_call_usage_and_model() -> None:
    scenario = import_capture(DATA / "openai-tool-call.sse").scenario
    first = scenario.model[0]
    assert (scenario.dialect, scenario.provider.model) == ("openai", "gpt-4o-mini-2024-07-18")
    assert [(c.tool, c.args) for c in first.calls] == [
        ("send_invoice", {"to": "cfo@example.com", "invoice": 7})]
    assert first.usage is not None
    assert (first.usage.input_tokens, first.usage.output_tokens) == (112, 21)
    assert first.finish_reason == "tool_calls"
    assert scenario.faults == []  # it ended with [DONE]: nothing to replay


def test_an_anthropic_stream_cut_before_message_stop_keeps_the_cut() -> None:
    scenario = import_capture(DATA / "anthropic-cut-short.sse").scenario
    assert scenario.model[0].text == "The deploy of 1.4 is green on every region; rolling"
    assert [f.kind for f in scenario.faults] == ["no_terminal_event"]
    usage = scenario.model[0].usage
    assert usage is not None
    # Anthropic's input_tokens leave the cache out; the scenario's count it in.
    assert (usage.input_tokens, usage.cache_read_tokens) == (472 + 1024, 1024)


def test_a_har_file_gives_its_stream_entry_with_the_wait_before_the_headers() -> None:
    scenario = import_capture(DATA / "incident.har").scenario
    assert [(c.tool, c.args) for c in scenario.model[0].calls] == [("outbox", {"folder": "sent"})]
    [fault] = scenario.faults
    assert (fault.kind, fault.fake_fields()["seconds"]) == ("stall_before_headers", 6.501)


def test_a_har_error_entry_becomes_an_http_error_with_its_retry_after() -> None:
    scenario = import_capture(DATA / "incident.har", entry=1).scenario
    [fault] = scenario.faults
    fields = fault.fake_fields()
    assert (fault.kind, fields["status"], fields["retry_after"]) == ("http_error", 429, 7)
    assert fields["message"].startswith("This request would exceed the rate limit")


@pytest.mark.parametrize("capture", ["openai-tool-call.sse", "anthropic-cut-short.sse",
                                     "incident.har"])
def test_the_written_file_validates_and_the_reference_agent_passes_it(
        capture: str, tmp_path: Path) -> None:
    out = tmp_path / "incident.yaml"
    assert main(["import", str(DATA / capture), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith(f"# Imported from {DATA / capture} by harness import")
    scenario = load_scenario(out)
    result = run_case(Case(scenario.name, out, scenario.seed), scenario)
    assert result.passed, [v for v in result.verdicts if v.status == "fail"]


def test_faults_layer_onto_an_imported_scenario(tmp_path: Path) -> None:
    out = tmp_path / "layered.yaml"
    main(["import", str(DATA / "openai-tool-call.sse"), "--out", str(out)])
    text = out.read_text(encoding="utf-8").replace(
        "expect:", "faults:\n  - {at: {turn: 1, attempt: 1}, kind: http_error, status: 503}\n"
        "expect:")
    out.write_text(text, encoding="utf-8")
    assert [f.kind for f in load_scenario(out).faults] == ["http_error"]


def test_a_stream_stalled_in_the_middle_becomes_a_stall_at_the_same_share(
        tmp_path: Path) -> None:
    reads = (DATA / "openai-tool-call.sse").read_bytes().split(b"\n\n")[:-1]
    chunks = tuple(Chunk(0.1 + (40.0 if i >= 7 else 0.0) + i / 100, r + b"\n\n")
                   for i, r in enumerate(reads))
    path = write_exchange(Exchange("POST", "https://api.openai.com/v1/chat/completions", (),
                                   b"{}", 200, (), chunks, 0.1), tmp_path / "stalled.json")
    [stall] = import_capture(path).scenario.faults
    fields = stall.fake_fields()
    assert (stall.kind, fields["seconds"]) == ("stall", 40.01)
    assert 1 <= fields["after_events"] < 20


BAD = [
    ("empty.sse", b"", "not a capture: found an empty file"),
    ("notes.txt", b"just some notes\n", "not a capture: found neither JSON nor "
     "text/event-stream bytes"),
    ("other.json", b'{"hello": 1}', "not a capture: found JSON that is neither a capture"),
    ("broken.json", b'{"format": "harness-capture/1", "request": {}}',
     "a harness capture with a missing or malformed field"),
    ("empty.har", b'{"log": {"entries": []}}', "a HAR file without entries"),
    ("unknown.sse", b'data: {"foo": 1}\n\n', "an SSE stream of 1 event(s) that no dialect"),
]


@pytest.mark.parametrize(("name", "content", "message"), BAD)
def test_a_bad_capture_is_one_clear_line_and_exit_2(
        name: str, content: bytes, message: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert main(["import", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"harness: error: {path}: ")
    assert message in err
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1


def test_a_har_entry_out_of_range_and_a_missing_file(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", str(DATA / "incident.har"), "--entry", "9"]) == 2
    assert "no HAR entry 9; expected --entry from 0 to 2" in capsys.readouterr().err
    assert main(["import", str(tmp_path / "nowhere.json")]) == 2
    assert "cannot read it" in capsys.readouterr().err


def test_a_status_the_fake_cannot_answer_is_named(tmp_path: Path) -> None:
    path = write_exchange(Exchange("POST", "https://api.openai.com/v1/chat/completions", (),
                                   b"{}", 418, (), (Chunk(0.0, b"{}"),)), tmp_path / "t.json")
    with pytest.raises(CaptureError, match=r"status 418 has no fault to replay it"):
        import_capture(path)


def test_the_capture_file_reads_back_byte_for_byte(tmp_path: Path) -> None:
    reads = (Chunk(0.5, "caf\u00e9".encode()[:4]), Chunk(0.6, "caf\u00e9".encode()[4:]))
    path = write_exchange(Exchange("POST", "http://x/v1", (("a", "b"),), b"\xff", 200, (),
                                   reads), tmp_path / "c.json")
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert [sorted(c) for c in raw["response"]["chunks"]] == [["at", "base64"], ["at", "base64"]]
    from harness.record import load_capture

    assert load_capture(path).exchange.chunks == reads


def test_arguments_cut_at_max_tokens_become_a_truncation_fault(tmp_path: Path) -> None:
    envelope = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}

    def chunk(delta: dict[str, object], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return "data: " + json.dumps(envelope | {"choices": [choice]}) + "\n\n"

    head = {"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "mail", "arguments": ""}}
    path = tmp_path / "cut.sse"
    path.write_text(chunk({"tool_calls": [head]})
                    + chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"to": "c'}}]})
                    + chunk({}, "length") + "data: [DONE]\n\n", encoding="utf-8")
    scenario = import_capture(path).scenario
    assert scenario.model[0].finish_reason == "length"
    [fault] = scenario.faults
    assert (fault.kind, fault.fake_fields()["call_index"]) == ("truncated_tool_arguments", 0)


def test_an_answer_that_was_not_streamed_is_read_from_its_json(tmp_path: Path) -> None:
    message = {"id": "msg_1", "type": "message", "role": "assistant",
               "model": "claude-haiku-4-5", "stop_reason": "tool_use",
               "content": [{"type": "text", "text": "Looking."},
                           {"type": "tool_use", "id": "toolu_1", "name": "outbox",
                            "input": {"folder": "sent"}}],
               "usage": {"input_tokens": 50, "output_tokens": 12}}
    body = json.dumps(message).encode()
    path = write_exchange(Exchange("POST", "https://api.anthropic.com/v1/messages", (), b"{}",
                                   200, (("content-type", "application/json"),),
                                   (Chunk(0.2, body),), 0.1), tmp_path / "json.json")
    scenario = import_capture(path).scenario
    first = scenario.model[0]
    assert (scenario.dialect, first.text) == ("anthropic", "Looking.")
    assert [(c.tool, c.args) for c in first.calls] == [("outbox", {"folder": "sent"})]
    assert scenario.faults == []
