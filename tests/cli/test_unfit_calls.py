"""A scripted call the agent's ``--target`` function cannot take: that scenario's ``unknown``.

The README's first command runs the shipped suite with ``--target mail=...`` onto a plain
``send_mail(to, body)``; ``crash/secret-arguments-stay-out.yaml`` passes ``mail`` an
``api_key`` too. That once ended the whole run with exit 2. The scenario's cases are now
``unknown``, naming the argument and the signature, and the other scenarios run. A
scenario's own ``target:`` that does not fit is still the file's mistake (exit 2).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness._cli import main

from .test_unfit_faults import _rows, scenario_folder
from .test_use_in_your_project import AGENT, TOOLS

WITH_API_KEY = """\
name: with-api-key
dialect: openai
seed: 3
tools:
  mail: {kind: send}
model:
  - turn: 1
    calls: [{tool: mail, args: {to: "cfo@example.com", body: "inv 7", api_key: "sk-x"}}]
  - turn: 2
    text: "Sent."
crash:
  points: none
expect:
  stop_state: complete
"""

PLAIN = """\
name: plain-mail
dialect: openai
seed: 4
tools:
  mail: {kind: send}
model:
  - turn: 1
    calls: [{tool: mail, args: {to: "cfo@example.com", body: "inv 7"}}]
  - turn: 2
    text: "Sent."
expect:
  stop_state: complete
  side_effects: {mail: 1}
"""

TARGET = ["--agent", "myagent.agent:main", "--target", "mail=myagent.tools:send_mail"]


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The one-tool openai-SDK agent of the README's walkthrough, and two scenarios."""
    package = tmp_path / "myagent"
    package.mkdir()
    for name, source in (("__init__", ""), ("agent", AGENT), ("tools", TOOLS)):
        (package / f"{name}.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return scenario_folder(tmp_path / "suite", {"a-with-api-key": WITH_API_KEY, "b-plain": PLAIN})


def test_a_call_the_target_does_not_take_is_that_scenarios_unknown(
        suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"

    assert main(["run", str(suite), *TARGET, "--out", str(out)]) == 0

    rows = _rows(out)
    assert rows["plain-mail"]["passed"] is True  # the run went on
    unfit = rows["with-api-key"]
    assert (unfit["passed"], unfit["error"], unfit["failed_invariants"]) == (False, None, [])
    assert unfit["unknown_invariants"] == ["script"]
    printed = capsys.readouterr().err
    assert ("a-with-api-key.yaml:8: model[0].calls[0] calls 'mail' with arguments --target "
            "mail=myagent.tools:send_mail does not take: got an unexpected keyword argument "
            "'api_key' (the function is send_mail(to: str, body: str) -> str)") in printed


def test_under_strict_a_scenario_never_played_fails_the_run(
        suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (suite / "b-plain.yaml").unlink()  # every case is unknown, and none has a crash point

    assert main(["run", str(suite), *TARGET, "--strict", "--out", str(tmp_path / "r")]) == 1

    printed = capsys.readouterr().err
    assert "with-api-key: its script was never played: " in printed
    assert "a-with-api-key.yaml:8: model[0].calls[0] calls 'mail'" in printed


def test_validate_names_the_call_as_run_would_leave_it_unknown(
        suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(suite / "a-with-api-key.yaml")]) == 0  # no --target: fits
    assert main(["validate", str(suite / "a-with-api-key.yaml"), *TARGET]) == 1
    printed = capsys.readouterr().out
    assert "a-with-api-key.yaml:8:32: model[0].calls[0].args" in printed
    assert "got an unexpected keyword argument 'api_key'" in printed


def test_a_scenarios_own_target_that_does_not_fit_is_still_the_files_mistake(
        suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    own = WITH_API_KEY.replace("mail: {kind: send}",
                               "mail: {kind: send, target: 'myagent.tools:send_mail'}")
    (suite / "a-with-api-key.yaml").write_text(own, encoding="utf-8")

    assert main(["run", str(suite), "--agent", "myagent.agent:main",
                 "--out", str(tmp_path / "r")]) == 2
    assert "got an unexpected keyword argument 'api_key'" in capsys.readouterr().err
