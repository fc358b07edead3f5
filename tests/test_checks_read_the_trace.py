"""The checkers judge a finished trace from what it records and the neutral layer's tables.

Importing :mod:`harness.checks` must not load the world that wrote the trace (the fakes):
a fresh interpreter shows what an import really pulls in, which a test process that already
imported everything cannot. The facts the checkers need (what a tool kind is, what a fault
does to a stream, what a model costs) are declared once in :mod:`harness.ports`, and the
fakes act by the same tables.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import fakes
import harness.ports
from fakes import FAULT_KINDS


def _modules_loaded_by(module: str, prefix: str) -> list[str]:
    code = (f"import {module}, sys; "
            f"print('\\n'.join(sorted(m for m in sys.modules if m.split('.')[0] == {prefix!r})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return done.stdout.split()


@pytest.mark.parametrize("module", ["harness.checks", "harness.trace", "harness.ports"])
def test_importing_the_checkers_loads_no_fakes_module(module: str) -> None:
    assert _modules_loaded_by(module, "fakes") == []


def test_every_fault_meaning_names_a_fault_kind() -> None:
    assert set(harness.ports.FAULT_MEANINGS) <= set(FAULT_KINDS)


@pytest.mark.parametrize("kind", sorted(FAULT_KINDS))
def test_each_fault_class_means_what_the_table_says(kind: str) -> None:
    cls = FAULT_KINDS[kind]
    meaning = harness.ports.FAULT_MEANINGS.get(kind, harness.ports.FaultMeaning())
    assert (cls.breaks_stream, cls.silences_stream, cls.cuts_stream,
            cls.loops_answer) == tuple(meaning)


def test_the_fakes_act_by_the_neutral_tables() -> None:
    # One object each, not a copy that could drift.
    assert fakes.TOOL_KIND_TRAITS is harness.ports.TOOL_KIND_TRAITS
    assert fakes.PRICES is harness.ports.PRICES
    assert fakes.SILENCING_FAULTS is harness.ports.SILENCING_FAULTS
