"""The fake model reads a tool reply's stated outcome, not only the reference's wording."""

from __future__ import annotations

import pytest

from harness.runner import classify_result


@pytest.mark.parametrize(("content", "is_error", "outcome"), [
    ('{"status": "unknown", "note": "it may have been sent"}', False, "unknown_after_restart"),
    ('{"outcome": "not_started"}', False, "interrupted_before_execution"),
    ('{"state": "Timed_Out"}', True, "timeout"),
    ('{"status": "unknown_after_restart"}', False, "unknown_after_restart"),
    ('{"error": "TOOL_OUTCOME_UNKNOWN"}', True, "unknown_after_restart"),
    ('{"status": "queued"}', False, "ok"),
    ("the mail may or may not have gone out", True, "error"),
    ("[1, 2]", False, "ok"),
])
def test_a_stated_outcome_wins_then_the_markers_then_is_error(
        content: str, is_error: bool, outcome: str) -> None:
    assert classify_result(content, is_error=is_error) == outcome
