"""The plugin's ``harness_server`` fixture: a served scenario for one test, then stopped."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

# System tier (pytest --system): real processes and servers on loopback.
pytestmark = pytest.mark.system

SCENARIO = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "exec-mail-once.yaml"


def test_the_fixture_serves_a_scenario(harness_server: Callable[..., Any]) -> None:
    served = harness_server(SCENARIO, time_scale=0.01)
    client = openai.OpenAI(base_url=served.env["OPENAI_BASE_URL"], api_key="k", max_retries=0)
    reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "go"}])
    assert reply.choices[0].message.tool_calls[0].function.name == "mail"  # type: ignore[index]
    assert [r.turn for r in served.world.request_records()] == [1]


def test_the_server_is_stopped_after_its_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=f"""
        from pathlib import Path

        def test_serve(harness_server):
            served = harness_server({str(SCENARIO)!r})
            Path("url").write_text(served.url)
        """)
    pytester.runpytest_inprocess("-p", "no:xdist").assert_outcomes(passed=1)
    url = (pytester.path / "url").read_text()
    with pytest.raises(httpx.ConnectError):
        httpx.get(url + "/_harness", timeout=2)
