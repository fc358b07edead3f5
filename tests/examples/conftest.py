"""What the example tests share: the careful agent's variants (careful_variants.py, importable
because this folder is put on the path), and one rule for frameworks: a framework that is not
installed skips its test, except where ``.ci/run`` installs them all
(``HARNESS_REQUIRE_FRAMEWORKS=1``), where it fails."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

# Appended, not put first: the tests' own ``conftest`` (tests/conftest.py, which other
# folders import helpers from) must stay the one ``import conftest`` finds.
sys.path.append(str(Path(__file__).parent))


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
