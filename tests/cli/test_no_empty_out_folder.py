"""An error found once a command has made its ``--out`` folder leaves no empty folder behind;
a folder that was there before is kept, empty or not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness._cli import main
from harness.runner import _handback

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
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scenario whose case's worker meets an error of the harness (as a target that no
    longer imports would be), which stops the run with exit 2 after ``--out`` was made."""

    def harness_error(*_: object) -> tuple[dict[str, Any], tuple[()]]:
        return {"kind": "harness_error", "problems": ["tools.mail.target: gone"]}, ()

    monkeypatch.setattr(_handback, "_ran", harness_error)  # the workers are forked: they see it
    (tmp_path / "hello.yaml").write_text(HELLO, encoding="utf-8")
    return tmp_path


def test_a_run_stopped_by_an_error_removes_the_folder_it_made(
        suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = suite / "new" / "results"

    code = main(["run", str(suite / "hello.yaml"), "--out", str(out)])

    assert code == 2
    assert "harness: error: tools.mail.target: gone" in capsys.readouterr().err
    assert not (suite / "new").exists()


def test_a_folder_that_was_there_is_kept(suite: Path) -> None:
    out = suite / "results"
    out.mkdir()

    code = main(["run", str(suite / "hello.yaml"), "--out", str(out)])

    assert code == 2
    assert out.is_dir()


def test_fuzz_stopped_by_a_bad_kind_removes_the_folder_it_made(suite: Path) -> None:
    out = suite / "fuzz-out"

    code = main(["fuzz", str(suite / "hello.yaml"), "--kind", "no_such_kind", "--out", str(out)])

    assert code == 2
    assert not out.exists()
