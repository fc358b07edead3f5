"""Every script in benchmarks/ runs, in its short mode, and exits 0.

A benchmark is run by hand, so one that no longer matches the code it measures
(a stand-in with an old signature, a renamed function) used to go unnoticed
until someone wanted its figures. Each script takes ``--quick``
(benchmarks/_quick.py): the same work on a small scale. A script that needs the
optional ``frameworks`` extra runs too, and names each framework it left out.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((ROOT / "benchmarks").glob("bench_*.py"))

# System tier (pytest --system): real processes, some of them servers; minutes in all.
pytestmark = pytest.mark.system


def run_quick(script: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("HARNESS_BENCH_QUICK", None)  # the flag alone must make the run short
    return subprocess.run([sys.executable, str(script), "--quick"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900, check=False)


def test_there_are_benchmarks_to_run() -> None:
    assert len(SCRIPTS) >= 10, SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_the_benchmark_runs_in_its_short_mode(script: Path) -> None:
    done = run_quick(script)

    assert done.returncode == 0, f"{script.name} exited {done.returncode}:\n" \
                                 f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.stdout.strip(), f"{script.name} printed no figures"


def test_the_framework_benchmark_names_each_framework_it_left_out() -> None:
    script = ROOT / "benchmarks" / "bench_framework_agents.py"
    sys.path.insert(0, str(script.parent))
    try:
        spec = importlib.util.spec_from_file_location("bench_framework_agents", script)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(script.parent))
    missing = [name for name, package in module.AGENTS.items()
               if importlib.util.find_spec(package) is None]

    done = run_quick(script)

    assert done.returncode == 0, done.stderr[-3000:]
    said = done.stdout.splitlines()
    for name in missing:
        assert any(line.startswith(name) and "not measured" in line for line in said), said


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the frameworks' own, unfiltered
@pytest.mark.parametrize("module", ["openai_sdk", "openai_agents_sdk", "llamaindex_agent"])
def test_the_crash_case_outside_the_harness_is_the_harness_runs_own(
        module: str, monkeypatch: pytest.MonkeyPatch,
        require_framework: Callable[[str], None]) -> None:
    """``--outside`` hands each incarnation the answers it got in the harness, all of them,
    and crashes the first right after its tool ran: the same work, without the harness."""
    require_framework({"openai_sdk": "openai", "openai_agents_sdk": "agents",
                       "llamaindex_agent": "llama_index"}[module])
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import _outside
    import bench_framework_agents

    from harness.intercept import PlainEntry

    case, scenario = bench_framework_agents.cases_of(module, crash_only=True)[0]
    recording = _outside.record(case, scenario, PlainEntry(f"examples.frameworks.{module}:main"))
    assert [len(answers) for answers in recording.incarnations] == [1, 2]
    assert recording.prompt

    before = sorted(p.name for p in Path.cwd().iterdir())
    played = _outside.play(recording)
    assert sorted(p.name for p in Path.cwd().iterdir()) == before  # its files went elsewhere

    assert played == (_outside.Played(1, 0, "crash"), _outside.Played(2, 0, "returned"))
