"""``harness validate`` makes every check ``harness run`` makes before the first case, from
the same function, and lists every error of every file in one pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness._cli import main

AGENT = '''\
import os


def send_mail(to: str, body: str) -> dict:
    raise RuntimeError("the real service is never called in a case")


def main(prompt: str) -> str:
    with open("notes.txt", "a") as f:
        f.write("x")
        f.flush()
        os.fsync(f.fileno())
    return "done"
'''

SCENARIO = '''\
name: s
dialect: openai
tools:
  mail: {{kind: send, target: "{module}:send_mail"}}
model:
  - turn: 1
    calls: [{{tool: mail, args: {{to: a, body: b}}}}]
  - turn: 2
    text: Done.
crash:
  points: [{points}]
  classes: [unsynced_lost]
expect:
  stop_state: complete
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
            ) -> tuple[Path, str]:
    """A folder holding an agent module of its own name (modules stay imported), made the
    current one, as a user's project is."""
    module = f"vagent_{request.node.name.replace('[', '_').replace(']', '_').replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(AGENT, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path, module


def _scenario(folder: Path, module: str, points: str = "notes:fsync#1", **edits: str) -> Path:
    text = SCENARIO.format(module=module, points=points)
    for old, new in edits.items():
        text = text.replace(old.replace("_", " "), new)
    path = folder / "s.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_validate_refuses_a_target_module_that_does_not_import(
        project: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    folder, module = project
    path = _scenario(folder, module)
    path.write_text(path.read_text().replace(f"{module}:send_mail", "nowhere_at_all:send"))

    assert main(["validate", str(path)]) == 1

    assert capsys.readouterr().out == (
        f"{path}:4:30: tools.mail.target: the target cannot be used: got 'nowhere_at_all:send'"
        "; expected 'module:function' naming a function of the agent's code. cannot import "
        "'nowhere_at_all' (ModuleNotFoundError: No module named 'nowhere_at_all')\n")


def test_a_scripted_argument_the_target_does_not_take_is_an_error_of_both_commands(
        project: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    folder, module = project
    path = _scenario(folder, module)
    path.write_text(path.read_text().replace("{to: a,", "{recipient: a,"))
    message = (f"{path}:7:32: model[0].calls[0].args: the arguments do not fit "
               f"{module}:send_mail, the target of tool 'mail': got {{recipient: a, body: b}}; "
               "expected the function's parameter names. missing a required argument: 'to' "
               "(the function is send_mail(to: str, body: str) -> dict)")

    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().out == message + "\n"

    # run refuses it before any case, with the same line, and leaves no results behind
    assert main(["run", str(path), "--agent", f"{module}:main", "--out",
                 str(folder / "out")]) == 2
    assert capsys.readouterr().err == f"harness: error: {message}\n"
    assert not (folder / "out").exists()


def test_every_error_of_every_file_is_listed_in_one_pass(
        project: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    folder, module = project
    first = _scenario(folder, module)
    first.write_text(first.read_text().replace("{to: a,", "{recipient: a,").replace(
        "tools:\n", "tools:\n  other: {kind: send, target: 'gone_module_x:f'}\n"))
    second = folder / "t.yaml"
    second.write_text(first.read_text().replace("name: s", "name: t")
                      + "faults:\n  - {kind: split_at, at: {turn: 2}, offsets: [5000]}\n")

    assert main(["validate", str(folder)]) == 1

    out, err = capsys.readouterr()
    assert [line.split(": ")[1] for line in out.splitlines()] == [
        "tools.other.target", "model[0].calls[0].args",
        "tools.other.target", "model[0].calls[0].args", "faults[0].offsets"]
    assert err == "harness: 5 error(s) in 2 of 2 file(s)\n"


def test_validate_with_an_agent_checks_the_points_of_its_own_files(
        project: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    folder, module = project
    path = _scenario(folder, module, points="notes:fsync#1, history:fsync#1, after_tool:mail#1")

    # Without an agent a listed point belongs to no layout yet: the file is fine.
    assert main(["validate", str(path)]) == 0
    capsys.readouterr()
    assert main(["validate", str(path), "--agent", f"{module}:main"]) == 1

    out = capsys.readouterr().out
    assert out.startswith(f"{path}:11:27: crash.points[1]: crash point was never reached in "
                          "the recorded run: got 'history:fsync#1'; expected one of "
                          "'notes:create#1', 'notes:write#1', 'notes:fsync#1'")
    assert out.endswith("Did you mean 'notes:fsync#1'?\n")
    assert len(out.splitlines()) == 1  # the world event and the reached point are fine


def test_validate_with_a_bad_agent_exits_2(
        project: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    folder, module = project
    path = _scenario(folder, module)

    assert main(["validate", str(path), "--agent", f"{module}:mian"]) == 2

    assert capsys.readouterr().err.startswith(f"harness: error: --agent: got '{module}:mian'")
