"""The release-comparison demonstration (DESIGN §7, seed 002 §19.7), end to end.

Two configurations of the reference agent run the shipped cache scenarios as two
releases; the candidate stamps a volatile value at the top of its system prompt.
The comparison must show the cached input share collapse, label the misses
``prefix_changed:system``, show the cost per successful task rise, and the gate
must fail on it with the regression exit code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness._cli import main


@pytest.fixture(scope="module")
def compared(release_demo: Path) -> tuple[Path, dict[str, object]]:
    data = json.loads((release_demo / "report" / "report.json").read_text())
    return release_demo, data


def _metric(data: dict[str, object], name: str) -> dict[str, float]:
    metrics = data["metrics"]
    assert isinstance(metrics, list)
    return next(m for m in metrics if m["name"] == name)


def test_the_cached_input_share_collapses(compared: tuple[Path, dict[str, object]]) -> None:
    share = _metric(compared[1], "cached_input_share")
    assert share["baseline"] > 0.6
    assert share["candidate"] == 0
    assert share["interval"][1] < -0.6  # the whole interval is a large drop


def test_the_misses_are_labelled_prefix_changed_system(
    compared: tuple[Path, dict[str, object]],
) -> None:
    misses = {(r["reason"], r["dimension"]): (r["misses"], r["misses_candidate"])
              for r in compared[1]["miss_reasons"]}  # type: ignore[attr-defined]
    assert misses[("prefix_changed:system", "harness.prompt_version")] == (0, 6)
    assert misses[("cold", None)] == (2, 2)  # each scenario's first request, in both
    markdown = (compared[0] / "report" / "report.md").read_text()
    assert "| prefix_changed:system | harness.prompt_version | 0 | 6 |" in markdown


def test_the_cost_per_successful_task_rises(compared: tuple[Path, dict[str, object]]) -> None:
    cost = _metric(compared[1], "cost_per_successful_task")
    assert cost["candidate"] > 2 * cost["baseline"] > 0
    assert cost["interval"][0] > 0


def test_the_first_token_comes_later_without_the_cache(
    compared: tuple[Path, dict[str, object]],
) -> None:
    # every prompt token is prefilled again when nothing is cached (fakes.Latency)
    ttft = _metric(compared[1], "ttft_mean_seconds")
    assert ttft["candidate"] > 1.3 * ttft["baseline"] > 0


def test_the_gate_fails_on_the_regression(
    compared: tuple[Path, dict[str, object]], capsys: pytest.CaptureFixture[str]
) -> None:
    root = compared[0]
    assert main(["gate", str(root / "baseline"), str(root / "candidate")]) == 5
    verdict = capsys.readouterr().out.splitlines()[-1]
    assert verdict.startswith("Gate: FAIL (exit 5): regression:cached_input_share")
