"""The agent's environment is an allow-list, and no secret of the harness's reaches an output.

The machine running the suite holds credentials; every form of agent (a plain ``main``, a
factory over the ports, an ``--exec`` process) sees only the allow-list of
:mod:`harness._environment` and the fake providers' keys, and whatever secret value an
agent still prints or raises is redacted in every file and line ``harness run`` writes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest

from fakes import child_environment
from harness._cli import main
from harness._environment import agent_environ, allowed_environment, host_environment
from harness._redact import REDACTED, is_secret_name, known_secrets, redact_text
from harness.intercept import FAKE_API_KEY, PROVIDER_ENVIRONMENT

#: As an AWS secret key reads; the agent module below holds it as if it had found it.
AWS_SECRET = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"
REAL_OPENAI_KEY = "sk-real-0123456789abcdef"

AGENTS = f'''
import os
from harness.agent import ReferenceAgent

SECRET = "{AWS_SECRET}"  # an agent that read it elsewhere (a file, /proc) and leaks it


def _seen():
    return ("aws=" + ("visible" if "AWS_SECRET_ACCESS_KEY" in os.environ else "absent")
            + " openai=" + os.environ.get("OPENAI_API_KEY", "none")
            + " setting=" + os.environ.get("MY_SETTING", "none"))


def main(prompt):
    print("printed:", os.environ.get("AWS_SECRET_ACCESS_KEY"),
          os.environ.get("OPENAI_API_KEY"))
    raise RuntimeError(f"{{_seen()}} leaked {{SECRET}}")


class Factory(ReferenceAgent):
    async def run(self, task):
        print("printed:", os.environ.get("AWS_SECRET_ACCESS_KEY"),
              os.environ.get("OPENAI_API_KEY"))
        raise RuntimeError(f"{{_seen()}} leaked {{SECRET}}")
'''
HELLO = """\
name: hello
dialect: openai
model:
  - turn: 1
    text: Hello.
expect:
  stop_state: complete
"""


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness's environment holds real-looking credentials and a setting."""
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", REAL_OPENAI_KEY)
    monkeypatch.setenv("MY_SETTING", "on")
    monkeypatch.setenv("PYTHON_KEYRING_PASSWORD", "keyring-0123456789")
    monkeypatch.delenv("HARNESS_PASS_ENV", raising=False)


@pytest.fixture
def agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "env_agents.py").write_text(AGENTS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    scenario = tmp_path / "hello.yaml"
    scenario.write_text(HELLO, encoding="utf-8")
    return scenario


def everything_written(out: Path) -> str:
    """Every result file's text, the Parquet tables read back (their pages are compressed)."""
    texts = []
    for path in sorted(out.iterdir()):
        if path.suffix == ".parquet":
            texts.append(json.dumps(pl.read_parquet(path).to_dicts(), default=str))
        else:
            texts.append(path.read_text(encoding="utf-8"))
    return "\n".join(texts)


@pytest.mark.usefixtures("secrets")
@pytest.mark.parametrize("agent", ["env_agents:main", "env_agents:Factory"])
def test_an_agent_sees_the_fake_keys_and_no_secret_and_what_it_leaks_is_redacted(
        agents: Path, tmp_path: Path, agent: str, capfd: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    code = main(["run", str(agents), "--agent", agent, "--no-crash", "--pass-env",
                 "MY_SETTING", "--out", str(out)])
    printed = capfd.readouterr()

    assert code == 1
    row = json.loads((out / "cases.jsonl").read_text(encoding="utf-8"))
    assert row["stop_reason"].endswith(
        f"aws=absent openai={FAKE_API_KEY} setting=on leaked {REDACTED}")
    assert f"printed: None {FAKE_API_KEY}" in printed.out  # what the agent printed itself
    written = everything_written(out)
    for secret in (AWS_SECRET, REAL_OPENAI_KEY):
        assert secret not in written
        assert secret not in printed.out + printed.err
    assert f"leaked {REDACTED}" in printed.out  # the failure report, redacted
    # The harness's own environment is as it was.
    assert os.environ["AWS_SECRET_ACCESS_KEY"] == AWS_SECRET
    assert os.environ["OPENAI_API_KEY"] == REAL_OPENAI_KEY
    assert "HARNESS_PASS_ENV" not in os.environ


@pytest.mark.usefixtures("secrets")
def test_without_pass_env_the_agent_does_not_see_a_setting(
        agents: Path, tmp_path: Path) -> None:
    out = tmp_path / "results"
    main(["run", str(agents), "--agent", "env_agents:main", "--no-crash", "--out", str(out)])
    row = json.loads((out / "cases.jsonl").read_text(encoding="utf-8"))
    assert "setting=none" in row["stop_reason"]


def refused(scenario: Path, *argv: str) -> tuple[int, bool]:
    """``harness run``'s exit code and whether it left a results folder behind."""
    out = scenario.parent / "results"
    try:
        code = main(["run", str(scenario), "--no-crash", "--out", str(out), *argv])
    except SystemExit as exit_:  # argparse's own refusal
        code = int(str(exit_.code))
    return code, out.exists()


def test_a_pass_env_that_cannot_name_a_variable_is_refused(
        agents: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert refused(agents, "--pass-env", "MY SETTING") == (2, False)
    assert "argument --pass-env: got 'MY SETTING'; expected the name of an environment " \
        "variable" in capsys.readouterr().err


def test_a_harness_pass_env_that_cannot_name_a_variable_is_refused(
        agents: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HARNESS_PASS_ENV", "A,MY=on")
    assert refused(agents) == (2, False)
    assert "harness: error: HARNESS_PASS_ENV: got 'MY=on'; expected the name of an " \
        "environment variable" in capsys.readouterr().err


@pytest.mark.usefixtures("secrets")
def test_the_allow_list_inside_a_case_and_the_harness_environment_after_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", "/opt/agent")
    monkeypatch.setenv("HARNESS_PASS_ENV", "MY_SETTING")
    before = dict(os.environ)
    with agent_environ(PROVIDER_ENVIRONMENT):
        seen = dict(os.environ)
        host = dict(host_environment())
        os.environ["LEFT_BY_THE_AGENT"] = "x"
        with agent_environ(PROVIDER_ENVIRONMENT):  # a plain agent's incarnation inside
            assert dict(os.environ) == {**seen, "LEFT_BY_THE_AGENT": "x"}
    assert dict(os.environ) == before
    assert host == before
    assert "AWS_SECRET_ACCESS_KEY" not in seen
    assert "PYTHON_KEYRING_PASSWORD" not in seen  # a PYTHON* name, but a secret's
    assert seen["OPENAI_API_KEY"] == FAKE_API_KEY
    assert (seen["PATH"], seen["PYTHONPATH"], seen["MY_SETTING"]) == (
        os.environ["PATH"], "/opt/agent", "on")
    assert set(seen) <= set(allowed_environment(PROVIDER_ENVIRONMENT))


@pytest.mark.usefixtures("secrets")
def test_inside_a_case_the_harness_still_knows_its_secrets_and_its_tools_settings(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAMED_VAR", "named-by-the-scenario")
    with agent_environ(PROVIDER_ENVIRONMENT):
        assert "NAMED_VAR" not in os.environ
        # A subprocess tool's child: the scenario's named variable, from the harness's.
        assert child_environment(["NAMED_VAR"])["NAMED_VAR"] == "named-by-the-scenario"
        assert AWS_SECRET in known_secrets()
        assert redact_text(f"said {AWS_SECRET}") == f"said {REDACTED}"


@pytest.mark.parametrize(("name", "secret"), [
    ("AWS_SECRET_ACCESS_KEY", True), ("AWS_REGION", True), ("GITHUB_TOKEN", True),
    ("DB_PASSWORD", True), ("DB_PASS", True), ("GOOGLE_APPLICATION_CREDENTIALS", True),
    ("SSH_AUTH_SOCK", True), ("OPENAI_API_KEY", True), ("SENTRY_DSN", True),
    ("TOKENIZERS_PARALLELISM", False), ("PATH", False), ("PWD", False), ("PYTHONPATH", False),
    ("HARNESS_SECRET_KEYS", False), ("HARNESS_PASS_ENV", False), ("KEYBOARD", False),
])
def test_secret_looking_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_bare_values_of_the_environment_are_redacted_from_eight_characters(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", "tok-0123456789")
    monkeypatch.setenv("SHORT_TOKEN", "abc1234")  # 7 characters: a setting, most likely
    monkeypatch.setenv("GREETING", "hello-world-0123")  # not a secret's name
    text = 'got tok-0123456789 and "tok-0123456789" and abc1234 and hello-world-0123'
    assert redact_text(text) == (f'got {REDACTED} and "{REDACTED}" and abc1234 and '
                                 "hello-world-0123")
