"""A long uncrashed run of the reference agent: ``turns`` turns, each one tool call.

Shared by tests/runner/test_long_run_memory.py and benchmarks/bench_long_run_memory.py.
"""

from __future__ import annotations

from harness.scenario import Scenario


def long_scenario(turns: int) -> Scenario:
    """``turns`` turns, each a tool call with its own note, then done; budgets to match."""
    model: list[dict[str, object]] = [
        {"turn": turn, "calls": [{"tool": "notes", "args": {"text": f"note {turn}"}}]}
        for turn in range(1, turns)]
    model.append({"turn": turns, "text": "Done."})
    return Scenario.model_validate({
        "name": f"long-{turns}", "dialect": "openai", "seed": 7,
        "tools": {"notes": {"kind": "append"}}, "model": model,
        "budget": {"max_turns": turns + 5, "max_attempts": turns + 10,
                   "deadline_seconds": 604800},
        "expect": {"stop_state": "complete"}})
