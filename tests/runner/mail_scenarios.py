"""The mail scenario the runner and checker tests share, built in Python.

A module of its own name, not the conftest: ``from conftest import …`` finds whichever
conftest Python imported first under that name, which depends on the folders a run
collects (the checker tests beside the record tests found the record tests' one).
"""

from __future__ import annotations

from typing import Any

from harness.scenario import Scenario


def mail_scenario(**overrides: Any) -> Scenario:
    """Send one mail; inspect after an unknown outcome; re-send if it never started."""
    data: dict[str, Any] = {
        "name": "mail",
        "dialect": "openai",
        "tools": {"mail": {"kind": "send"}, "look": {"kind": "inspect"}},
        "model": [
            {"turn": 1, "text": "Sending.",
             "calls": [{"tool": "mail", "args": {"to": "a", "body": "hi"}}]},
            {"turn": 2, "when": {"tool": "mail", "outcome": "unknown_after_restart"},
             "calls": [{"tool": "look"}]},
            {"turn": 2, "when": {"tool": "mail", "outcome": "interrupted_before_execution"},
             "calls": [{"tool": "mail", "args": {"to": "a", "body": "hi"}}]},
            {"turn": 2, "text": "Done."},
            {"turn": 3, "text": "Done after looking."},
        ],
        "crash": {"points": "all"},
        "expect": {"stop_state": "complete"},
    }
    data.update(overrides)
    return Scenario.model_validate(data)
