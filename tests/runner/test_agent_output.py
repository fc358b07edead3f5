"""What an agent writes is kept per case, its tail only, and shown in its failure report."""

from __future__ import annotations

import os
from pathlib import Path

from harness._report_text import render_failure
from harness.runner import Case, CaseResult
from harness.runner._agent_output import OutputTail, drain
from harness.runner._results import AgentOutput

CASE = Case("s", Path("s.yaml"), 1)


def test_the_tail_keeps_the_last_bytes_and_counts_them_all() -> None:
    tail = OutputTail(keep=10)
    tail.add(b"0123456789")
    tail.add(b"abcdef")

    assert tail.take() == AgentOutput("6789abcdef", written=16, kept=10)
    assert tail.take() is None  # each case starts empty


def test_secret_values_are_taken_out_of_the_tail() -> None:
    tail = OutputTail()
    tail.add(b"connecting with hunter2-secret-value\n")
    output = tail.take(["hunter2-secret-value"])
    assert output is not None
    assert "hunter2-secret-value" not in output.tail


def test_a_drain_reads_what_is_there_and_tells_the_end() -> None:
    readable, writable = os.pipe()
    os.set_blocking(readable, False)
    tail = OutputTail()
    os.write(writable, b"one\n")
    assert drain(readable, tail)
    os.close(writable)
    assert not drain(readable, tail)  # end of file: the worker has gone
    os.close(readable)
    assert tail.take() == AgentOutput("one\n", written=4, kept=4)


def test_the_failure_report_shows_the_last_lines_of_the_output() -> None:
    lines = "".join(f"line {n}\n" for n in range(100))
    result = CaseResult(CASE, None, "stopped", (), "", crash_reached=True, error="boom",
                        output=AgentOutput(lines[-200:], written=70_000, kept=200))
    report = render_failure(result)

    assert "the agent's output (stdout and stderr): its last 20 line(s) of 70,000 bytes" \
        in report
    assert "  line 99\n" in report
    assert "line 79" not in report


def test_a_case_that_wrote_nothing_has_no_output_section() -> None:
    result = CaseResult(CASE, None, "stopped", (), "", crash_reached=True, error="boom")
    assert "the agent's output" not in render_failure(result)
