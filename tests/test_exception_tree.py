"""Every exception of the project is drawn in the one tree of ``harness._errors``."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import fakes
import harness
import harness._errors
import reports
from fakes import HarnessLimitExceeded, SimulatedCrash, ToolFailure, ToolReplyLost
from harness import HarnessError

# Outside the HarnessError tree on purpose; the tree's docstring says why.
OUTSIDE = {SimulatedCrash, ToolFailure, ToolReplyLost, HarnessLimitExceeded}
PRIVATE_SIGNALS = {"ScenarioProblems", "CaseFailed", "_Silence", "_AliasCycleError",
                   "_AliasBombError", "_Violation", "FuzzFound", "Rejoined", "Interrupted",
                   "_Refused", "TraceDataError", "NotJson"}


def project_exceptions() -> set[type[BaseException]]:
    found: set[type[BaseException]] = set()
    for package in (harness, fakes, reports):
        # The package itself too: the errors a user catches say they are harness's.
        names = [package.__name__, *(info.name for info in pkgutil.walk_packages(
            package.__path__, package.__name__ + "."))]
        for name in names:
            if name.endswith("__main__"):
                continue
            module = importlib.import_module(name)
            found |= {
                value for value in vars(module).values()
                if inspect.isclass(value) and issubclass(value, BaseException)
                and value.__module__ == module.__name__
            }
    return found


def test_every_exception_is_drawn_in_the_tree() -> None:
    tree = harness._errors.__doc__ or ""
    assert sorted(e.__name__ for e in project_exceptions() if e.__name__ not in tree) == []


def test_every_exception_is_a_harness_error_or_stands_outside_on_purpose() -> None:
    stray = [e.__name__ for e in project_exceptions()
             if not issubclass(e, (HarnessError, *OUTSIDE))
             and e.__name__ not in PRIVATE_SIGNALS]
    assert stray == []


def test_a_simulated_crash_is_no_exception_an_agent_could_swallow() -> None:
    assert issubclass(SimulatedCrash, BaseException)
    assert not issubclass(SimulatedCrash, Exception)
