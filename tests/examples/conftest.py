"""What the example tests share: the careful agent's variants (careful_variants.py, importable
because this folder is put on the path), and one rule for frameworks: a framework that is not
installed skips its test, except where ``.ci/run`` installs them all
(``HARNESS_REQUIRE_FRAMEWORKS=1``), where it fails."""

from __future__ import annotations

import sys
from pathlib import Path

# Appended, not put first: the tests' own ``conftest`` (tests/conftest.py, which other
# folders import helpers from) must stay the one ``import conftest`` finds.
sys.path.append(str(Path(__file__).parent))
