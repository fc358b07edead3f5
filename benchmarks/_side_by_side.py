"""``--against REV`` and ``--rounds N``: a benchmark that measures this tree beside a commit.

Each such benchmark runs its load in both trees in turns (a busy machine weighs on both
alike) and reports the best of its rounds; this is where the other tree comes from.

    .venv/bin/python benchmarks/bench_ledger_pipe.py --against main --rounds 3
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def option(name: str) -> str | None:
    """The value after ``name`` on the command line, or None."""
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None


def rounds(default: int) -> int:
    """``--rounds N``, else ``default``."""
    given = option("--rounds")
    return int(given) if given is not None else default


@contextlib.contextmanager
def trees(base: Path, revision: str | None) -> Iterator[dict[str, Path]]:
    """This tree, after a checkout of ``revision`` in ``base/old``, removed afterwards.

    A real checkout (``git worktree add --detach``), as this tree is, so the two differ
    in their commits only: a tree ``git archive`` unpacked was once measured about 1.7
    times as slow as a checkout (not seen again: best of four alternated rounds, 11.05
    against 10.92 ms per crash case), which a ratio would have counted as this tree's gain.
    """
    if revision is None:
        yield {"this tree": HERE}
        return
    old = base / "old"
    subprocess.run(["git", "-C", str(HERE), "worktree", "add", "--quiet", "--detach", str(old),
                    revision], check=True)
    try:
        yield {revision: old, "this tree": HERE}
    finally:
        subprocess.run(["git", "-C", str(HERE), "worktree", "remove", "--force", str(old)],
                       check=False)
