"""Canaries: no secret of the environment or of a tool call reaches a child, a result, a report
or the failure text."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fakes import CHILD_ENVIRONMENT, child_environment
from harness._cli import main
from harness._redact import REDACTED, is_secret_key, redact, redact_text

SCENARIO = """\
name: canary
dialect: openai
tools:
  mail: {{kind: send, secret: [pin]}}
  shell:
    kind: read
    behaviour: {{kind: subprocess, argv: [sh, -c, "env > {env_file}"], env: [NAMED_VAR]}}
model:
  - turn: 1
    calls:
      - {{tool: mail, args: {{pin: "CANARY-MARKED-4", to: "cfo@example.com",
          api_key: "CANARY-ARG-1", password: "CANARY-ARG-2",
          headers: {{Authorization: "Bearer CANARY-ARG-3"}}}}}}
      - {{tool: shell, args: {{}}}}
  - turn: 2
    text: "Done."
expect:
  stop_state: complete
  side_effects: {{mail: 2}}
"""


def test_no_canary_reaches_a_child_a_result_a_report_or_the_output(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "CANARY-ENV-1")
    monkeypatch.setenv("GITHUB_TOKEN", "CANARY-ENV-2")
    monkeypatch.setenv("SOMETHING_API_KEY", "CANARY-ENV-3")
    monkeypatch.setenv("NAMED_VAR", "named-by-the-scenario")
    # Shared memory: the one place a sealed case worker's children still write
    # (harness/runner/_seal.py).
    env_file = Path("/dev/shm") / f"harness-test-{os.getpid()}-{tmp_path.name}-env.txt"
    scenario = tmp_path / "canary.yaml"
    scenario.write_text(SCENARIO.format(env_file=env_file), encoding="utf-8")
    out, report = tmp_path / "results", tmp_path / "report"

    assert main(["run", str(scenario), "--no-crash", "--out", str(out)]) == 1  # mail: 1, not 2
    main(["compare", str(out), str(out), "--out", str(report)])
    printed = capfd.readouterr()

    child = env_file.read_text(encoding="utf-8")
    env_file.unlink()
    assert "PATH=" in child  # the child ran
    assert "NAMED_VAR=named-by-the-scenario" in child
    assert "CANARY" not in child
    assert "--- FAILED canary" in printed.out.replace("_", "-")
    assert "CANARY" not in printed.out + printed.err
    for path in [*out.iterdir(), *report.iterdir()]:
        assert b"CANARY" not in path.read_bytes(), path
    row = json.loads((out / "cases.jsonl").read_text(encoding="utf-8").splitlines()[0])
    j3 = next(v for v in row["verdicts"] if v["invariant"] == "J3")
    assert (j3["status"], j3["message"]) == (
        "pass", "mail.Authorization, mail.api_key, mail.password, mail.pin in none of the "
        "agent's 2 file(s)")  # and none in the agent's own files


def test_the_child_environment_is_the_allow_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "x")
    monkeypatch.setenv("MY_SETTING", "y")
    assert set(child_environment()) <= set(CHILD_ENVIRONMENT)
    assert child_environment(["MY_SETTING"])["MY_SETTING"] == "y"
    assert "ANTHROPIC_API_KEY" not in child_environment(["MY_SETTING"])
    assert child_environment()["PATH"] == os.environ["PATH"]


@pytest.mark.parametrize(("key", "secret"), [
    ("api_key", True), ("OPENAI_API_KEY", True), ("apiKey", True), ("X-Api-Key", True),
    ("password", True), ("access_token", True), ("Authorization", True),
    ("client_secret", True), ("max_tokens", False), ("input_tokens", False), ("to", False),
    ("author", False),
])
def test_secret_looking_keys(key: str, secret: bool) -> None:
    assert is_secret_key(key) is secret


def test_more_secret_words_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_SECRET_KEYS", "pin, session_id")
    assert redact({"pin": "1234", "session_id": "s", "to": "x"}) == {
        "pin": REDACTED, "session_id": REDACTED, "to": "x"}
    assert redact_text("pin=1234 to=x") == f"pin={REDACTED} to=x"


def test_the_failure_text_pytest_prints_is_redacted(tmp_path: Path) -> None:
    from harness import runner
    from harness._report_text import render_failure
    from harness.scenario import load_scenario

    path = tmp_path / "canary.yaml"
    path.write_text(SCENARIO.format(env_file=tmp_path / "env.txt"), encoding="utf-8")
    scenario = load_scenario(path)
    case = runner.plan_cases(scenario, path)[0]
    text = render_failure(runner.run_case(case, scenario=scenario), scenario)
    assert 'api_key: "[redacted]"' in text
    assert "CANARY" not in text
