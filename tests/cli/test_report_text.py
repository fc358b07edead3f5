"""The failure report ``harness run`` and the pytest plugin both print."""

from __future__ import annotations

from pathlib import Path

from harness._report_text import render_failure
from harness.runner import Case, CaseResult, CrashSpec, Verdict
from harness.scenario import load_scenario


def test_the_report_shows_the_lines_the_failure_points_at(write, monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    write("crashy")
    scenario = load_scenario(Path("crashy.yaml"))
    crash = CrashSpec("journal:fsync#1", "after", "unsynced_lost")
    evidence = ("notes applied twice", *(f"ledger row {n}" for n in range(14)))
    result = CaseResult(
        Case("crashy", Path("crashy.yaml"), 0, crash), "complete", "done",
        (Verdict("I1", "fail", "notes applied twice", evidence), Verdict("I2", "pass", "ok")),
        "d", crash_reached=True, side_effects={"notes": 2}, duplicates=1)

    assert render_failure(result, scenario).splitlines() == [
        "I1 broken: notes applied twice",
        "scenario  crashy  (crashy.yaml, seed 0)",
        "crash     journal:fsync#1 after, unsynced_lost (reached)",
        "stopped   complete: done",
        "ledger    notes=2 side effect(s); 1 duplicate(s)",
        "",
        "crashy.yaml",
        "   1 | name: crashy",
        "   2 | dialect: openai",
        "   3 | tools:",
        ">  4 |   notes: {kind: append}",
        "   5 | model:",
        "   6 |   - turn: 1",
        ">  7 |     calls: [{tool: notes, args: {line: hi}}]",
        "   8 |   - turn: 2",
        " ...",
        "  10 | crash:",
        "> 11 |   points: [journal:fsync#1, journal:fsync#2]",
        "  12 |   classes: [unsynced_lost]",
        "  13 | expect:",
        "  14 |   stop_state: complete",
        "",
        "broken invariants",
        "  I1: notes applied twice",
        *(f"      | ledger row {n}" for n in range(12)),
        "      | ... (2 more lines)",
        "",
        "replay: harness run crashy.yaml --seed 0 --crash-at 'journal:fsync#1:after:unsynced_lost' "
        "--out results-replay",
    ]
