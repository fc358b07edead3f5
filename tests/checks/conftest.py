"""The checker tests reuse the runner tests' scenarios and minimal agent, and the reference
agent's traces of reference_traces.py."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "runner"))
sys.path.insert(0, str(Path(__file__).parent))
