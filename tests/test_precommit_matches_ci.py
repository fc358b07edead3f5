"""The pre-commit hooks run what CI runs before its tests, in the same words.

A hook that drifted from ``.ci/run`` (a package left out of mypy, another test command)
would pass a commit that CI then fails.
"""

from __future__ import annotations

import re
from pathlib import Path

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[1]


def _hook_entries() -> dict[str, str]:
    config = YAML(typ="safe").load((ROOT / ".pre-commit-config.yaml").read_text("utf-8"))
    return {hook["id"]: hook["entry"] for repo in config["repos"] for hook in repo["hooks"]}


def _ci_commands() -> list[str]:
    lines = (ROOT / ".ci" / "run").read_text("utf-8").splitlines()
    return [line.strip() for line in lines if line and not line.lstrip().startswith("#")]


def test_the_linters_are_ci_s_linters() -> None:
    hooks, ci = _hook_entries(), _ci_commands()
    assert f"{hooks['ruff']} ." in ci
    assert hooks["mypy"] in ci


def test_the_push_hook_runs_ci_s_quick_tier() -> None:
    quick = _hook_entries()["quick-tier"]
    assert any(re.fullmatch(r"pytest -n auto", command) for command in _ci_commands())
    assert quick.split()[:3] == ["pytest", "-n", "auto"]
    assert "--system" not in quick
