"""The harness's words as tables made from the code that declares them.

README.md holds one table per vocabulary, between ``<!-- vocabulary: NAME -->`` and
``<!-- /vocabulary -->``; a test keeps each equal to :func:`tables`, so the README
cannot drift from the code. After a change to one of the declarations, rewrite them::

    python -m harness._vocabulary README.md

>>> tables()["dialects"].splitlines()[0]
'| dialect | streaming path | SDK `base_url` (after the origin) |'
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Sequence

Rows = list[tuple[str, ...]]


def _reply_statuses() -> Rows:
    from harness.ports import REPLY_STATUS_MEANINGS, REPLY_STATUSES, classify_reply

    return [(f"`{status}`", REPLY_STATUS_MEANINGS[status],
             f"`{classify_reply(json.dumps({'status': status}))}`")
            for status in REPLY_STATUSES]


def _when_outcomes() -> Rows:
    from harness.ports import REPLY_STATUSES, TOOL_OUTCOME_MEANINGS, TOOL_OUTCOMES, classify_reply

    def statuses(outcome: str) -> str:
        read = [f"`{s}`" for s in REPLY_STATUSES
                if classify_reply(json.dumps({"status": s})) == outcome]
        return ", ".join(read) or "(none: another agent's reply)"

    return [(f"`{outcome}`", TOOL_OUTCOME_MEANINGS[outcome], statuses(outcome))
            for outcome in TOOL_OUTCOMES]


def _crash_classes() -> Rows:
    from fakes import CRASH_CLASS_MEANINGS, CRASH_CLASSES
    from harness.runner import ERROR_CLASSES

    return [(f"`{name}`", "no" if name in ERROR_CLASSES else "yes", CRASH_CLASS_MEANINGS[name])
            for name in CRASH_CLASSES]


def _crash_settings() -> Rows:
    from harness._options import CRASH_SETTINGS, OLD_CRASH_SETTINGS

    def old(name: str) -> str:
        return ", ".join(f"`{word}` (deprecated)" for word, means in OLD_CRASH_SETTINGS.items()
                         if means == name) or "(none)"

    return [(f"`{name}`", what, old(name)) for name, what in CRASH_SETTINGS.items()]


def _fault_kinds() -> Rows:
    from harness.scenario import FAULT_KINDS

    return [(f"`{kind}`", fault.layer, (fault.__doc__ or "").strip().splitlines()[0])
            for kind, fault in FAULT_KINDS.items()]


def _dialects() -> Rows:
    from harness.ports import DIALECTS, SPECS

    return [(f"`{name}`", f"`{SPECS[name].path}`",
             f"`{SPECS[name].sdk_base}`" if SPECS[name].sdk_base else "(none)")
            for name in DIALECTS]


def _point_kinds() -> Rows:
    from fakes import POINT_OPS
    from harness.runner import WORLD_POINT_KINDS, WORLD_POINT_MEANINGS

    own: Rows = [(", ".join(f"`{op}`" for op in POINT_OPS), "`ROLE:OP#N`",
            "the N-th operation OP on the agent's own file or folder whose role is ROLE "
            "(named after it: `journal.jsonl` is `journal`); crashed before or after it")]
    world: Rows = [(f"`{kind}`", f"`{WORLD_POINT_MEANINGS[kind][0]}`",
              f"a world event, the same for every agent: {WORLD_POINT_MEANINGS[kind][1]}; "
              "crashed at it") for kind in WORLD_POINT_KINDS]
    return own + world


def _exit_codes() -> Rows:
    from harness._cli import RUN_EXIT_CODES, VALIDATE_EXIT_CODES
    from reports import EXIT_CODES

    return [(f"`harness {command}`", str(code), meaning)
            for command, codes in (("run", RUN_EXIT_CODES), ("validate", VALIDATE_EXIT_CODES),
                                   ("gate", EXIT_CODES))
            for code, meaning in codes.items()]


_TABLES: dict[str, tuple[tuple[str, ...], Callable[[], Rows]]] = {
    "reply-statuses": (("reply status", "what the model is told", "`when.outcome` it reads as"),
                       _reply_statuses),
    "when-outcomes": (("`when.outcome`", "meaning", "reply statuses read as it"),
                      _when_outcomes),
    "crash-classes": (("crash class", "stops the process", "what it leaves"), _crash_classes),
    "crash-settings": (("crash setting", "what every scenario crashes", "old spelling"),
                       _crash_settings),
    "fault-kinds": (("fault kind", "layer", "what it does"), _fault_kinds),
    "dialects": (("dialect", "streaming path", "SDK `base_url` (after the origin)"), _dialects),
    "point-kinds": (("point kind", "id", "where it strikes"), _point_kinds),
    "exit-codes": (("command", "exit", "meaning"), _exit_codes),
}


def _markdown(header: Sequence[str], rows: Rows) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return "\n".join([line(header), line(["---"] * len(header)), *map(line, rows)])


def tables() -> dict[str, str]:
    """Each vocabulary's name and its Markdown table."""
    return {name: _markdown(header, rows()) for name, (header, rows) in _TABLES.items()}


_SECTION = re.compile(r"(<!-- vocabulary: ([a-z-]+) -->\n)(.*?)(<!-- /vocabulary -->)",
                      re.DOTALL)


def sections(text: str) -> dict[str, str]:
    """The table between each pair of markers of ``text``, by name."""
    return {match.group(2): match.group(3).rstrip("\n") for match in _SECTION.finditer(text)}


def rewrite(text: str) -> str:
    """``text`` with every marked table made again from the code."""
    made = tables()
    return _SECTION.sub(lambda m: m.group(1) + made[m.group(2)] + "\n" + m.group(4), text)


def main(argv: Sequence[str]) -> int:
    """Rewrite the tables of each file named."""
    for name in argv:
        with open(name, encoding="utf-8") as file:
            text = file.read()
        with open(name, "w", encoding="utf-8") as file:
            file.write(rewrite(text))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
