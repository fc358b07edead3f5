"""A real agent process on the served clock, and every crash case of ``--exec``.

The agent is ``tests/serve/clock_agent.py`` (httpx, honours Retry-After as a float).
Scales are small (0.01, 0.001) to keep the runs short, but for one scenario short in
scenario time run on the real clock (1.0) too; nothing here reads the wall clock: what
is compared is what the server sent and what the checks said.
"""

from __future__ import annotations

import email.utils
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness._cli import main
from harness.scenario import load_scenario
from harness.serve import serving

# System tier (pytest --system): real processes and servers on loopback.
pytestmark = pytest.mark.system

AGENT = f"{sys.executable} {Path(__file__).with_name('clock_agent.py')}"
SCENARIO = """
name: exec-clock
description: Mail the CFO invoice 7, once.
dialect: openai
seed: 5
tools:
  mail: {{kind: send}}
model:
  - turn: 1
    calls: [{{tool: mail, args: {{to: "cfo@example.com", body: "invoice 7"}}}}]
  - turn: 2
    text: "Sent."
faults:
  - {{at: {{turn: 1, attempt: 1}}, kind: http_error, status: 429, retry_after: {retry_after}}}
  - {{at: {{turn: 2, attempt: 1}}, kind: http_error, status: 503, retry_after_ms: 20000}}
crash:
  points: {points}
expect:
  stop_state: complete
  side_effects: {{mail: 1}}
"""
REQUEST = {"model": "m", "messages": [{"role": "user", "content": "go"}]}

Run = Callable[..., tuple[int, list[dict[str, Any]], str]]


def write(tmp_path: Path, points: str = "none", retry_after: str = "60") -> Path:
    path = tmp_path / "exec-clock.yaml"
    path.write_text(SCENARIO.format(points=points, retry_after=retry_after), encoding="utf-8")
    return path


@pytest.fixture
def harness_exec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                 capsys: pytest.CaptureFixture[str]) -> Run:
    """``harness run … --exec AGENT`` in this process: its exit code, cases and output."""
    monkeypatch.chdir(tmp_path)
    runs = iter(range(100))

    def run(scenario: Path, *argv: str) -> tuple[int, list[dict[str, Any]], str]:
        out = tmp_path / f"results-{next(runs)}"
        capsys.readouterr()
        code = main(["run", str(scenario), "--exec", AGENT, "--out", str(out), *argv])
        cases = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
        printed = capsys.readouterr()
        return code, cases, printed.out + printed.err
    return run


def statuses(case: dict[str, Any]) -> dict[str, str]:
    return {v["invariant"]: v["status"] for v in case["verdicts"]}


def test_retry_headers_on_the_wire_are_in_scaled_time_and_the_record_in_scenario_time(
        tmp_path: Path) -> None:
    loaded = load_scenario(write(tmp_path))
    with serving([loaded], time_scale=0.01) as served:
        answer = httpx.post(f"{served.url}/v1/chat/completions", json=REQUEST)
        records = httpx.get(f"{served.url}/_harness/requests",
                            headers={"Authorization": f"Bearer {served.token}"}).json()
    assert answer.status_code == 429
    assert answer.headers["retry-after"] == "0.6"   # 60 scenario seconds at 0.01
    assert records[0]["retry_after"] == 60.0         # what the checks judge by


def test_geminis_retry_delay_in_the_body_is_in_scaled_time_too(tmp_path: Path) -> None:
    path = write(tmp_path)
    path.write_text(path.read_text().replace("dialect: openai", "dialect: gemini"))
    with serving([load_scenario(path)], time_scale=0.01) as served:
        answer = httpx.post(f"{served.url}/v1beta/models/m:generateContent",
                            json={"contents": [{"role": "user", "parts": [{"text": "go"}]}]})
        records = httpx.get(f"{served.url}/_harness/requests",
                            headers={"Authorization": f"Bearer {served.token}"}).json()
    assert answer.status_code == 429
    [retry] = [d for d in answer.json()["error"]["details"] if "retryDelay" in d]
    assert retry["retryDelay"] == "0.6s"
    assert records[0]["retry_after"] == 60.0


def test_an_http_date_retry_after_is_dated_from_the_real_date_header(tmp_path: Path) -> None:
    # 30 s after the fakes' calendar began (2026-01-01): 0.3 real s after the world began.
    loaded = load_scenario(write(tmp_path, retry_after='"Thu, 01 Jan 2026 00:00:30 GMT"'))
    with serving([loaded], time_scale=0.01) as served:
        answer = httpx.post(f"{served.url}/v1/chat/completions", json=REQUEST)
    sent = email.utils.parsedate_to_datetime(answer.headers["retry-after"]).timestamp()
    dated = email.utils.parsedate_to_datetime(answer.headers["date"]).timestamp()
    # Both whole seconds of the real calendar: the wait they give is 0.3 s, rounded up.
    assert 0 <= sent - dated <= 2


def test_the_same_agent_gets_the_same_verdicts_at_two_scales(tmp_path: Path,
                                                             harness_exec: Run) -> None:
    scenario = write(tmp_path)
    seen = {}
    for scale in ("0.01", "0.001"):
        code, [case], out = harness_exec(scenario, "--time-scale", scale)
        assert code == 0, out
        seen[scale] = statuses(case)
    assert seen["0.01"] == seen["0.001"]
    # I9 is unknown: a process is handed no budget, so none is held against it.
    assert (seen["0.01"]["S5"], seen["0.01"]["I9"]) == ("pass", "unknown")


# Short in scenario time, so that it costs about 3 real seconds at --time-scale 1.0: each
# asked wait is longer than the early margin of 0.01 (0.5 s), so S5 judges all of them at
# both scales, and the silences (1 s) are far below S1's idle bound (30 s) even with the
# late margin of 1.0 (0.1 s) eaten by a loaded machine (harness/checks/_tolerance.py).
SHORT_FAULTS = """faults:
  - {at: {turn: 1, attempt: 1}, kind: http_error, status: 429, retry_after: 1}
  - {at: {turn: 1, attempt: 2}, kind: stall_before_headers, seconds: 1}
  - {at: {turn: 2, attempt: 1}, kind: http_error, status: 503, retry_after_ms: 800}
"""


def write_short(tmp_path: Path) -> Path:
    path = write(tmp_path)
    text = path.read_text(encoding="utf-8")
    start, end = text.index("faults:\n"), text.index("crash:\n")
    path.write_text(text[:start] + SHORT_FAULTS + text[end:], encoding="utf-8")
    return path


def test_the_same_agent_gets_the_same_verdicts_on_real_time_and_at_0_01(
        tmp_path: Path, harness_exec: Run) -> None:
    """Scale 1.0 is the real clock: a real process's jitter there (and the wire's rounding
    at 0.01) is within the checks' documented margins, so the verdicts agree."""
    scenario = write_short(tmp_path)
    seen, waits = {}, {}
    for scale in ("1.0", "0.01"):
        code, [case], out = harness_exec(scenario, "--time-scale", scale)
        assert code == 0, out
        seen[scale] = statuses(case)
        waits[scale] = next(v["message"] for v in case["verdicts"] if v["invariant"] == "S5")
    assert seen["1.0"] == seen["0.01"]
    assert (seen["1.0"]["S5"], seen["1.0"]["I9"], seen["1.0"]["faults"]) == \
        ("pass", "unknown", "pass")  # every fault struck, at both scales; no budget told
    assert waits["1.0"] == waits["0.01"] == "2 asked wait(s) honoured"


def test_points_all_runs_a_crash_case_at_every_world_event_and_an_unreached_one_is_unknown(
        tmp_path: Path, harness_exec: Run) -> None:
    scenario = write(tmp_path, points='[all, "after_tool:mail#2", "journal:fsync#1"]')
    code, cases, out = harness_exec(scenario, "--time-scale", "0.001")
    crashed = {case["crash_point"]: case for case in cases if case["crash_point"]}
    reached = [point for point, case in crashed.items() if case["crash_reached"]]
    assert set(reached) >= {"before_request:1", "after_tool:mail#1", "before_request:2"}
    assert len(reached) == len(crashed) - 2, out
    never = crashed["after_tool:mail#2"]
    assert never["crash_reached"] is False
    assert statuses(never)["crash"] == "unknown"
    own = crashed["journal:fsync#1"]
    assert "an --exec agent writes them on the real disk" in next(
        v["message"] for v in own["verdicts"] if v["invariant"] == "crash")
    assert code == 1  # the naive agent mails twice after a kill at after_tool:mail#1


def test_strict_fails_a_run_whose_listed_point_no_case_reached(tmp_path: Path,
                                                               harness_exec: Run) -> None:
    scenario = write(tmp_path, points='["after_tool:mail#2"]')
    code, cases, out = harness_exec(scenario, "--time-scale", "0.001")
    assert code == 0, out  # without --strict a case that proved nothing fails nothing
    assert [case["crash_reached"] for case in cases] == [True, False]
    code, _, out = harness_exec(scenario, "--time-scale", "0.001", "--strict")
    assert code == 1
    assert "exec-clock: crash point after_tool:mail#2 was never reached" in out


def test_a_refused_scale_starts_no_process(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "harness", "run", str(write(tmp_path)),
                           "--exec", f"touch {tmp_path / 'ran'}", "--time-scale", "1e-9",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].endswith(
        "below 0.001 a millisecond is more than a scenario second")
    assert not (tmp_path / "ran").exists()
