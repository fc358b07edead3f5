"""The checker tests reuse the runner tests' scenarios and minimal agent, and the reference
agent's traces of reference_traces.py."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "runner"))
# Appended, not put first: a folder with a conftest put first on the path makes it the
# one a bare ``import conftest`` elsewhere finds.
sys.path.append(str(Path(__file__).parent))
