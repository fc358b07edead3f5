"""What the framework tests share: a framework that is not installed skips its test, except
where ``.ci/run`` installs them all (``HARNESS_REQUIRE_FRAMEWORKS=1``), where it fails."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable

import pytest


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
