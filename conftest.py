"""The project's two tiers of tests.

``pytest -n auto`` runs the quick tier: every test not marked ``system``, and the
shipped suite as a quick pass (``harness_crash = sample`` in ``pyproject.toml``).
``pytest -n auto --system`` runs the system tier as well: tests that start real
processes, servers or a browser, run every case of shipped scenarios more than one
way, or run whole searches. ``.ci/run`` runs both tiers, and every case of the
shipped suite twice (``harness run scenarios --check-determinism``).
"""

from __future__ import annotations

import pytest

SYSTEM_TIER = "system"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--system", action="store_true", default=False,
                     help="also run the system tier: tests marked 'system' (real processes, "
                          "servers, a browser, whole sweeps and searches)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Deselected, not skipped: the summary counts them apart, and says how to run them.
    if config.getoption("--system"):
        return
    system = [item for item in items if item.get_closest_marker(SYSTEM_TIER) is not None]
    if not system:
        return
    chosen = set(map(id, system))
    items[:] = [item for item in items if id(item) not in chosen]
    config.hook.pytest_deselected(items=system)


def pytest_report_header(config: pytest.Config) -> str:
    if config.getoption("--system"):
        return "tiers: quick and system"
    return "tiers: quick (the system tier: pytest --system)"
