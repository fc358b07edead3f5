"""Each mutant of the catalogue dies on the cases its table row names, by the check named.

The whole matrix (every mutant against every case) is ``python -m harness.mutants``;
this test runs only the named kills, so the test command stays quick.
"""

from __future__ import annotations

import pytest

from harness.mutants import MUTANTS, Kill, Mutant
from harness.mutants._run import killed_by, run_kill

KILLS = [(m, k) for m in MUTANTS for k in m.kills]


@pytest.mark.parametrize(("mutant", "kill"), KILLS,
                         ids=[f"{m.name}-{k.check}-{k.scenario.rsplit('/', 1)[-1]}"
                              for m, k in KILLS])
def test_the_named_case_kills_the_mutant_by_the_named_check(mutant: Mutant, kill: Kill) -> None:
    result = run_kill(kill, mutant.factory)
    failed = [f"{v.invariant}: {v.message}" for v in result.failed_verdicts]
    assert killed_by(result, kill.check), f"{mutant.name} survived {kill}: failed {failed}"


def test_every_mutant_is_named_after_a_rule_and_has_a_killer() -> None:
    names = [m.name for m in MUTANTS]
    assert len(names) == len(set(names))
    for mutant in MUTANTS:
        assert mutant.kills, mutant.name
        # A rule of DESIGN §5 (S, J, L), an invariant of §6 (I), §3's determinism (D3), or a
        # check of seed 002 §19.4 (JOBS, CANCEL) or §19.7 (CACHE), or seed 000 §5's cleaned
        # child environment (ENV).
        rule = mutant.name.split("-", 1)[0]
        assert rule[:1] in "SJLID" or rule in {"JOBS", "CANCEL", "CACHE", "ENV"}, mutant.name


def test_the_readme_table_is_the_catalogue() -> None:
    from pathlib import Path

    from harness.mutants._run import markdown_table

    readme = Path("harness/mutants/README.md").read_text(encoding="utf-8")
    assert readme.rstrip().endswith(markdown_table(MUTANTS)), \
        "regenerate the table with: python -m harness.mutants --table"


def test_a_mutant_only_crash_cases_kill_is_out_of_reach_under_no_crash(
        capsys: pytest.CaptureFixture[str]) -> None:
    # Before, it was marked SURVIVED and failed the run, with no word of why.
    from harness.mutants.__main__ import main

    code = main(["--no-crash", "--only", "J4-unknown-as-not-started",
                 "scenarios/crash/unknown-send-is-inspected.yaml"])

    out, err = capsys.readouterr()
    assert code == 0
    assert out == ("J4-unknown-as-not-started  not run  needs crash cases (run without "
                   "--no-crash)\n")
    assert err == "0 of 0 mutants killed; 1 out of reach of these options\n"


def test_a_determinism_mutant_is_out_of_reach_without_the_check() -> None:
    from harness.mutants._run import out_of_reach

    caught = [m for m in MUTANTS if all(k.check == "determinism" for k in m.kills)]
    assert caught
    assert out_of_reach(caught[0], crashes=True, twice=False) == "--check-determinism"
    assert out_of_reach(caught[0], crashes=True, twice=True) is None
