"""``--agent MODULE:FACTORY`` runs a user's own agent through the same cases."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness._cli import main
from harness.runner._agents import load_agent_factory

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios/tools/repeated-error-stops.yaml"
RUNNER_TESTS = str(Path(__file__).resolve().parents[1] / "runner")


@pytest.fixture
def minimal_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(RUNNER_TESTS)
    monkeypatch.setitem(sys.modules, "agents_under_test", _agents_module())


def _agents_module() -> object:
    import types

    from minimal_agent import minimal_factory

    module = types.ModuleType("agents_under_test")
    module.minimal = minimal_factory()  # type: ignore[attr-defined]
    return module


def test_the_named_agent_runs_and_is_judged(
    minimal_on_path: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(SCENARIO), "--out", str(tmp_path), "--agent",
                 "agents_under_test:minimal"]) == 1
    out = capsys.readouterr().out
    assert "  L3: deploy" in out  # the minimal agent has no repetition guard
    assert main(["run", str(SCENARIO), "--out", str(tmp_path)]) == 0  # the reference agent


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon", r"^--agent: got 'no_colon'; expected MODULE:ATTRIBUTE, such as "
                     r"'mypackage\.agent:main' \(a plain main\(prompt\)\) or "
                     r"'harness\.agent:ReferenceAgent' \(a factory over the ports\)$"),
        ("no_such_module_here:f", r"^--agent: got 'no_such_module_here:f'; expected "
                                  r"MODULE:ATTRIBUTE.*\. Module 'no_such_module_here' cannot be "
                                  r"imported: No module named 'no_such_module_here'$"),
        ("harness.agent:Nope", r"^--agent: got 'harness\.agent:Nope'; expected MODULE:ATTRIBUTE"
                               r".*\. harness\.agent has no callable 'Nope'; it has: .*$"),
    ],
)
def test_a_bad_spec_says_what_is_expected(spec: str, message: str) -> None:
    from harness import ConfigError

    with pytest.raises(ConfigError, match=message):
        load_agent_factory(spec)


def test_a_bad_spec_on_the_command_line_is_exit_2_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(SCENARIO), "--out", str(tmp_path), "--agent", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("harness: error: --agent: got 'nope'")
    assert "Traceback" not in err
