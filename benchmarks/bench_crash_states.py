"""Crash states explored per second, on one core: a 3-call workload, every point x class.

Runs the recovery property's driver (tests/agent/test_recovery_properties.py):
record the persistence points of a clean run, then one run per point x
before/after x applicable crash class, each checked for I1, I2, I10 and I11.

    .venv/bin/python benchmarks/bench_crash_states.py [--quick]
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

from _quick import scaled

DRIVER = Path(__file__).resolve().parent.parent / "tests" / "agent" / "test_recovery_properties.py"


def _load_driver() -> object:
    # The driver is the test's model of the agent loop; measure exactly that.
    spec = importlib.util.spec_from_file_location("recovery_driver", DRIVER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    driver = _load_driver()
    ops = [driver.Op(1, "append"), driver.Op(2, "send"), driver.Op(3, "put")]  # type: ignore[attr-defined]
    recording = driver.run_scenario(ops, None)  # type: ignore[attr-defined]
    points = [p.id for p in recording.disk.points]
    plans = list(driver.crash_plans(points))  # type: ignore[attr-defined]
    plans = plans[:scaled(len(plans), 10)]
    started = time.perf_counter()
    violations = 0
    for plan in plans:
        violations += bool(driver.run_scenario(ops, plan).violations)  # type: ignore[attr-defined]
    elapsed = time.perf_counter() - started
    print(f"points: {len(points)}  crash states: {len(plans)}  violations: {violations}")
    print(
        f"elapsed: {elapsed:.2f} s  rate: {len(plans) / elapsed:.0f} crash states/s (target >= 170)"
    )


if __name__ == "__main__":
    main()
