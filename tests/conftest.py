"""What every test of the project shares, and its two tiers.

``pytest -n auto`` runs the quick tier: every test not marked ``system``, and the
shipped suite as a quick pass (``harness_crash = sample`` in ``pyproject.toml``).
``pytest -n auto --system`` runs the system tier as well: tests that start real
processes, servers or a browser, run every case of shipped scenarios more than one
way, or run whole searches. ``.ci/run`` runs both tiers, and every case of the
shipped suite twice (``harness run scenarios --check-determinism``).
"""

from __future__ import annotations

import importlib.util
import os
import selectors
import shutil
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# The plugin sends each case to its sealed worker pickled, and pickle finds a class by its
# module's name. pytester's in-process runs drop the modules a run imported, so a second
# run would import the runner anew while the `harness` package still holds the first
# copy: a Case of one copy, looked up in the other, does not pickle. Imported here, they
# are the outer process's, kept across runs, as in any real pytest session.
import harness.runner
import harness.scenario  # noqa: F401

SYSTEM_TIER = "system"

#: The health checks that time a test: a loaded machine (a CI runner beside other jobs)
#: fails them on a test that passes alone. Every property test runs without them and
#: without a deadline; a test that suppresses more checks adds to these, never replaces
#: them (``tests/test_hypothesis_profile.py`` holds every test to it).
LOAD_DEPENDENT_HEALTH_CHECKS = (HealthCheck.too_slow,)
settings.register_profile("loaded-machine", deadline=None,
                          suppress_health_check=LOAD_DEPENDENT_HEALTH_CHECKS)
settings.load_profile("loaded-machine")


def pytest_configure(config: pytest.Config) -> None:
    # A suite started in the background by a non-interactive shell (`cmd &` in a script)
    # inherits SIGINT ignored, and so does every child a test starts, whose Python then
    # installs no KeyboardInterrupt: the tests that stop a child with Ctrl-C would wait
    # for ever. Python's own handler, as in a terminal.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--system", action="store_true", default=False,
                     help="also run the system tier: tests marked 'system' (real processes, "
                          "servers, a browser, whole sweeps and searches)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Deselected, not skipped: a test left to the other tier is no result of this run.
    if config.getoption("--system"):
        return
    quick: list[pytest.Item] = []
    system: list[pytest.Item] = []
    for item in items:
        (quick if item.get_closest_marker(SYSTEM_TIER) is None else system).append(item)
    if system:
        items[:] = quick
        config.hook.pytest_deselected(items=system)


def pytest_report_header(config: pytest.Config) -> str:
    if config.getoption("--system"):
        return "tiers: quick and system"
    return "tiers: quick (the system tier: pytest --system)"


@pytest.fixture(autouse=True)
def _import_path_restored() -> Iterator[None]:
    """Put ``sys.path`` back after each test.

    ``harness run`` makes the current folder importable for ``--agent`` specs, as
    ``python -m`` does; a test that calls it in-process must not leave that folder on
    the path for the next test (pytester's in-process runs then find the project's
    packages twice and refuse to rewrite their asserts).
    """
    saved = list(sys.path)
    yield
    sys.path[:] = saved



@pytest.fixture
def strict_ini() -> str:
    """The ini of a pytester project: every warning an error, as in the project itself.

    Except one: an in-process pytester run marks this project's packages for assertion
    rewriting again, and warns that they were imported already, whenever an earlier test
    of the same worker imported them outside the rewriting hook. That is about the
    order of the project's own tests, not about the plugin under test.
    """
    return ("[pytest]\nfilterwarnings =\n    error\n"
            "    ignore:Module already imported so cannot be rewritten"
            ":pytest.PytestAssertRewriteWarning\n")


@pytest.fixture
def real_waits(monkeypatch: pytest.MonkeyPatch) -> list[float | None]:
    """Every real wait a virtual clock's selector made during the test (its timeout).

    Virtual time must cost no wall time: a test shows it by this list staying empty,
    whatever the machine's load, instead of by timing itself.
    """
    from fakes._clock import _VirtualSelector

    waits: list[float | None] = []
    real_select = selectors.DefaultSelector.select

    def select(self: selectors.BaseSelector, timeout: float | None = None) -> Any:
        if isinstance(self, _VirtualSelector) and timeout != 0:
            waits.append(timeout)
        return real_select(self, timeout)  # type: ignore[arg-type]

    monkeypatch.setattr(selectors.DefaultSelector, "select", select)
    return waits


@pytest.fixture
def require_framework() -> Callable[[str], None]:
    """Call with a package name before using that framework."""

    def required(package: str) -> None:
        if importlib.util.find_spec(package) is not None:
            return
        reason = f"{package!r} is not installed (pip install -e '.[test,frameworks]')"
        if os.environ.get("HARNESS_REQUIRE_FRAMEWORKS") == "1":  # .ci/run installs them
            pytest.fail(f"HARNESS_REQUIRE_FRAMEWORKS=1 but {reason}")
        pytest.skip(reason)

    return required


def require_node_packages(folder: Path, package: str) -> None:
    """Skip without Node.js (fail instead under ``HARNESS_REQUIRE_NODE=1``, which
    ``.ci/run`` sets after installing it); fail when ``npm ci`` was not run in ``folder``."""
    if shutil.which("node") is None:
        reason = "Node.js is not installed (the agents in another language need it)"
        if os.environ.get("HARNESS_REQUIRE_NODE") == "1":  # .ci/run installs it: never skip
            pytest.fail(f"HARNESS_REQUIRE_NODE=1 but {reason}")
        pytest.skip(reason)
    if not (folder / "node_modules" / package).is_dir():
        pytest.fail(f"the {package} npm package is missing: run 'npm ci' in {folder}")
