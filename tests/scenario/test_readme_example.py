"""The README's scenario example is the shipped file it names, not a drifted copy."""

from __future__ import annotations

import re
from pathlib import Path

from harness.scenario import load_scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_scenario_is_the_file_it_names() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"```yaml\n# (scenarios/\S+\.yaml)[^\n]*\n(.*?)```", readme, re.DOTALL)
    assert found is not None
    named, text = found.groups()

    example = parse_scenario(text.encode(), "README.md")

    assert example.model_dump() == load_scenario(ROOT / named).model_dump()
