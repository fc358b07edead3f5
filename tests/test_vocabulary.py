"""The README's vocabulary tables are the code's: each is made from the declarations and
compared with the README text, and every declaration of a meaning covers its whole set."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fakes._crashdisk import CRASH_CLASS_MEANINGS, CRASH_CLASSES
from harness._cli import main
from harness._vocabulary import rewrite, sections, tables
from harness.ports import DIALECTS, REPLY_STATUS_MEANINGS, REPLY_STATUSES
from harness.ports._replies import TOOL_OUTCOME_MEANINGS, TOOL_OUTCOMES
from harness.runner._points import WORLD_POINT_KINDS, WORLD_POINT_MEANINGS

README = Path(__file__).resolve().parents[1] / "README.md"
NAMES = ["reply-statuses", "when-outcomes", "crash-classes", "crash-settings", "fault-kinds",
         "dialects",
         "point-kinds", "exit-codes"]


def test_the_readme_holds_one_table_per_vocabulary() -> None:
    assert list(sections(README.read_text(encoding="utf-8"))) == NAMES == list(tables())


@pytest.mark.parametrize("name", NAMES)
def test_each_readme_table_equals_the_one_made_from_the_code(name: str) -> None:
    written = sections(README.read_text(encoding="utf-8"))[name]
    assert written == tables()[name], \
        "run 'python -m harness._vocabulary README.md' and commit the change"


def test_rewriting_the_readme_changes_nothing() -> None:
    text = README.read_text(encoding="utf-8")
    assert rewrite(text) == text


def test_every_meaning_covers_exactly_its_set() -> None:
    assert tuple(CRASH_CLASS_MEANINGS) == CRASH_CLASSES
    assert tuple(TOOL_OUTCOME_MEANINGS) == TOOL_OUTCOMES
    assert tuple(REPLY_STATUS_MEANINGS) == REPLY_STATUSES
    assert tuple(WORLD_POINT_MEANINGS) == WORLD_POINT_KINDS


def test_the_tables_name_every_value_of_the_code() -> None:
    made = tables()
    for name, values in [("crash-classes", CRASH_CLASSES), ("when-outcomes", TOOL_OUTCOMES),
                         ("reply-statuses", REPLY_STATUSES), ("dialects", DIALECTS)]:
        firsts = [row.split(" | ")[0].removeprefix("| ") for row in made[name].splitlines()[2:]]
        assert firsts == [f"`{value}`" for value in values]


@pytest.mark.parametrize("command", ["run", "demo"])
def test_dialect_help_lists_every_dialect(command: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    # argparse wraps lines at spaces and after hyphens
    help_text = re.sub(r"\s+", " ", re.sub(r"-\n\s*", "-", capsys.readouterr().out))
    assert ", ".join(DIALECTS) in help_text
