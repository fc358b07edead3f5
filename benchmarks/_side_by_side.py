"""``--against REV`` and ``--rounds N``: a benchmark that measures this tree beside a commit.

Each such benchmark runs its load in both trees in turns (a busy machine weighs on both
alike) and reports the best of its rounds; this is where the other tree comes from.

    .venv/bin/python benchmarks/bench_ledger_pipe.py --against main --rounds 3
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def option(name: str) -> str | None:
    """The value after ``name`` on the command line, or None."""
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None


def rounds(default: int) -> int:
    """``--rounds N``, else ``default``."""
    given = option("--rounds")
    return int(given) if given is not None else default


def trees(base: Path, revision: str | None) -> dict[str, Path]:
    """This tree, after ``revision``'s files (``git archive``) unpacked into ``base/old``."""
    if revision is None:
        return {"this tree": HERE}
    old = base / "old"
    old.mkdir()
    archive = subprocess.run(["git", "-C", str(HERE), "archive", revision],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
    return {revision: old, "this tree": HERE}
