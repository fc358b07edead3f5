"""Seeded randomness and ids: the same seed gives the same values, per subsystem.

Each subsystem draws from its own :class:`random.Random`, derived from the run
seed and the subsystem's name, so adding a draw in one subsystem never shifts
the values another one sees.
"""

from __future__ import annotations

import hashlib
import random


def rng_stream(seed: int, name: str) -> random.Random:
    """Return the random stream ``name`` of the run ``seed``.

    >>> rng_stream(7, "backoff").random() == rng_stream(7, "backoff").random()
    True
    """
    digest = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


class IdSource:
    """Ids derived from a seed, a prefix and a counter, never from ``uuid4``.

    >>> ids = IdSource(seed=1, prefix="att")
    >>> ids.next() != ids.next()
    True
    """

    def __init__(self, seed: int, prefix: str, start: int = 0) -> None:
        self._seed = seed
        self._prefix = prefix
        self._counter = start

    def next(self) -> str:
        self._counter += 1
        digest = hashlib.sha256(f"{self._seed}:{self._prefix}:{self._counter}".encode())
        return f"{self._prefix}_{digest.hexdigest()[:12]}"

    @property
    def issued(self) -> int:
        """How many ids this source has handed out (to resume after a restart)."""
        return self._counter
