"""Scenarios as long as asked, for crash exploration's tests and its benchmark."""

from __future__ import annotations

from typing import Any

from harness.scenario import Scenario


def appends(turns: int) -> Scenario:
    """``turns`` turns of one append each, then a closing text; every point, one class."""
    model: list[dict[str, Any]] = [
        {"turn": t, "text": f"Step {t}.", "calls": [{"tool": "notes", "args": {"text": f"n{t}"}}]}
        for t in range(1, turns + 1)]
    model.append({"turn": turns + 1, "text": "Done."})
    return Scenario.model_validate({
        "name": f"appends-{turns}", "dialect": "openai", "seed": 5,
        "tools": {"notes": {"kind": "append"}}, "model": model,
        "crash": {"points": "all", "classes": ["unsynced_lost"]},
        "budget": {"max_turns": turns + 5, "max_attempts": 2 * turns + 10},
        "expect": {"stop_state": "complete"}})
