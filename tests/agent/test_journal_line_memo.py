"""Remembered journal lines parse exactly as ``JournalRecord.from_json(json.loads(line))``."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from harness.agent import _journal
from harness.agent._journal import JournalRecord, parse_journal_line

LINES = [
    JournalRecord("intent", "exec_1", 1, "call_1", "turn_1", "mail", "run_1", 0.5, "ab").to_line(),
    JournalRecord("result", "exec_1", 3, "call_1", "turn_1", "mail", "run_1", 2.0, "ab", "cd",
                  "returned").to_line(),
    b'{"seq":2,"state":"execution_started","executionId":"exec_\xc3\xa9","callId":"c",'
    b'"turnId":"t","tool":"x","runId":"r","at":1,"argsSha256":"ab"}\n',
]
BAD = [b'{"seq":1,"state":"intent"', b'{"seq":"1"}', b"[1]", b"\xef\xbb\xbf{}", b"\x00{"]


@pytest.mark.parametrize("line", LINES)
def test_a_remembered_line_is_the_library_parse(line: bytes) -> None:
    line = line.rstrip(b"\n")
    _journal._PARSED.clear()
    expected = JournalRecord.from_json(json.loads(line))

    assert parse_journal_line(line) == expected  # parsed
    assert parse_journal_line(line) == expected  # remembered
    assert line in _journal._PARSED


def failure(parse: Callable[[bytes], object], line: bytes) -> tuple[type, str]:
    try:
        parse(line)
    except ValueError as error:
        return type(error), str(error)
    raise AssertionError(f"{line!r} parsed")


@pytest.mark.parametrize("line", BAD)
def test_a_bad_line_raises_what_the_library_raises_every_time(line: bytes) -> None:
    expected = failure(lambda raw: JournalRecord.from_json(json.loads(raw)), line)

    assert failure(parse_journal_line, line) == expected
    assert failure(parse_journal_line, line) == expected
    assert line not in _journal._PARSED


def test_a_foreign_line_with_a_mutable_field_is_not_shared() -> None:
    line = (b'{"seq":1,"state":"intent","executionId":"e","callId":"c","turnId":"t",'
            b'"tool":"x","runId":"r","at":0,"argsSha256":"ab","resultSha256":["x"]}')
    first = parse_journal_line(line)
    assert first.result_sha256 == ["x"]
    assert parse_journal_line(line).result_sha256 is not first.result_sha256


def test_the_memo_forgets_its_oldest_line_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    _journal._PARSED.clear()
    monkeypatch.setattr(_journal._JOURNAL_LINES, "_limit", 2)
    lines = [JournalRecord("intent", f"exec_{n}", n, "c", "t", "x", "r", 0.0, "ab").to_line()
             .rstrip(b"\n") for n in (1, 2, 3)]
    for line in lines:
        parse_journal_line(line)
    assert list(_journal._PARSED) == lines[1:]


def test_a_session_line_is_parsed_once_and_shared_read_only() -> None:
    from harness.agent import _session_log

    line = (b'{"seq":1,"kind":"user","runId":"r","incarnation":1,"at":0,"turnId":"t1",'
            b'"text":"hi","source":"task"}')
    first = _session_log._SESSION_LINES(line)
    assert _session_log._SESSION_LINES(line) is first
    with pytest.raises(TypeError):
        first.body["text"] = "changed"  # type: ignore[index]
