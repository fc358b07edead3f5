"""The runner's test folder on the path, for its shared scenarios (``mail_scenarios.py``)
and helpers, which the checker tests import too."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
