"""A google-genai error ends the run in the stop state its HTTP status stands for.

google-genai's ``APIError`` carries its status as ``code``, not ``status_code``: a
429 a Gemini agent (Google ADK does not retry by default) let through read as
``failed`` instead of ``usage_limited``, a 503 as ``failed`` instead of
``infra_paused``, a 401 as ``failed`` instead of ``blocked``.
"""

from __future__ import annotations

import pytest
from google.genai import errors  # the test extra's: a plain import, never a skip

from harness.intercept import stop_state_for


@pytest.mark.parametrize(("code", "status", "stop"), [
    (429, "RESOURCE_EXHAUSTED", "usage_limited"),
    (503, "UNAVAILABLE", "infra_paused"),
    (401, "UNAUTHENTICATED", "blocked"),
    (400, "INVALID_ARGUMENT", "failed"),
])
def test_a_gemini_error_stops_the_run_as_its_status_says(code: int, status: str,
                                                         stop: str) -> None:
    body = {"error": {"code": code, "message": "from the fake", "status": status}}
    kind = errors.ClientError if code < 500 else errors.ServerError
    assert stop_state_for(kind(code, body)) == stop


def test_a_gemini_error_wrapped_by_the_agent_is_read_through_its_cause() -> None:
    body = {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}
    wrapped = RuntimeError("the model call failed")
    wrapped.__cause__ = errors.ClientError(429, body)
    assert stop_state_for(wrapped) == "usage_limited"


def test_an_exit_code_is_not_taken_for_a_status() -> None:
    assert stop_state_for(SystemExit(429)) == "failed"
