import pytest

from harness._cli import main
from harness._demo import CASES


def test_the_demo_passes_every_case_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--dialect", "openai"]) == 0
    out = capsys.readouterr().out
    assert f"{len(CASES)} passed, 0 failed" in out
    assert "120 s stall, then 429 Retry-After 60, then success  committed  3" in out


def test_the_demo_fails_when_a_case_ends_differently(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import dataclasses

    import harness._demo as demo_module

    wrong = dataclasses.replace(CASES[0], expected="failed")
    monkeypatch.setattr(demo_module, "CASES", (wrong,))
    assert main(["demo", "--dialect", "anthropic"]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith("harness 0.1.0")
    assert main([]) == 0
