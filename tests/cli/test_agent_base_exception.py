"""An agent that raises a ``BaseException`` (not an ``Exception``) fails its case with its
reason in the case's row, not only "the worker exited with code 1"."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness._cli import main
from tests.cli.conftest import HELLO

# System tier (pytest --system): real worker processes.
pytestmark = pytest.mark.system

RAISING = '''
from harness.agent import ReferenceAgent


class Boom(BaseException):
    pass


def custom(prompt):
    raise Boom("the reason is 42")


def keyboard(prompt):
    raise KeyboardInterrupt("pressed 42")


class Factory(ReferenceAgent):
    async def run(self, task):
        raise Boom("the factory's reason is 42")
'''


@pytest.fixture
def raising(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "raising_agents.py").write_text(RAISING, encoding="utf-8")
    (tmp_path / "hello.yaml").write_text(HELLO.replace("anthropic", "openai"), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("raising_agents", None)


@pytest.mark.parametrize(("agent", "reason"), [
    ("custom", "Boom: the reason is 42"), ("keyboard", "KeyboardInterrupt: pressed 42"),
    ("Factory", "Boom: the factory's reason is 42")])
def test_a_base_exception_fails_its_case_with_its_reason(
        raising: Path, agent: str, reason: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = raising / "out"

    code = main(["run", str(raising / "hello.yaml"), "--agent", f"raising_agents:{agent}",
                 "--no-crash", "--out", str(out)])

    capsys.readouterr()
    assert code == 1
    row = json.loads((out / "cases.jsonl").read_text(encoding="utf-8"))
    assert row["stop_reason"] == f"the agent raised {reason}; the case was stopped there"
