"""What every test of the project shares."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest


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
