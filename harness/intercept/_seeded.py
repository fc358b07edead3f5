"""The agent's randomness, seeded from the case (DESIGN §3, "Determinism").

An unchanged agent draws jitter from :mod:`random`, ids from ``uuid.uuid4()``
and temporary file names from :mod:`tempfile`. Unseeded, each would make two
runs of the same case differ: a different backoff, a different idempotency key,
a different persistence point id for the temporary file. While an incarnation
runs, :func:`seeded_randomness` seeds all three from the case's seed and the
incarnation number, and puts everything back afterwards. A library's
``from uuid import uuid4``, bound before the case, draws the same ids
(:mod:`harness.intercept._bound`); a thread outside the case draws real ones.

>>> import random, uuid
>>> with seeded_randomness(7, incarnation=1):
...     first = (random.random(), uuid.uuid4())
>>> with seeded_randomness(7, incarnation=1):
...     first == (random.random(), uuid.uuid4())
True
"""

from __future__ import annotations

import os
import random
import tempfile
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fakes import CASE_THREADS
from harness.intercept._bound import names_follow
from harness.ports import rng_stream


@contextmanager
def seeded_randomness(seed: int, *, incarnation: int) -> Iterator[None]:
    """Seed :mod:`random`, ``uuid.uuid4`` and :mod:`tempfile` names for the duration."""
    saved_state = random.getstate()
    saved_uuid4 = uuid.uuid4
    saved_names: Any = tempfile._name_sequence  # type: ignore[attr-defined]
    random.seed(rng_stream(seed, f"agent.random:{incarnation}").getrandbits(64))
    ids = rng_stream(seed, f"agent.uuid4:{incarnation}")
    here = threading.current_thread()

    def uuid4() -> uuid.UUID:
        # A thread outside the case (an exporter's) draws real ids, not the case's.
        current = threading.current_thread()
        if current is here or current in CASE_THREADS:
            return uuid.UUID(int=ids.getrandbits(128), version=4)
        return saved_uuid4()

    uuid.uuid4 = uuid4
    tempfile._name_sequence = _seeded_names(seed, incarnation)  # type: ignore[attr-defined]
    try:
        with names_follow({"uuid.uuid4": (saved_uuid4, uuid4)}):
            yield
    finally:
        tempfile._name_sequence = saved_names  # type: ignore[attr-defined]
        uuid.uuid4 = saved_uuid4
        random.setstate(saved_state)


def _seeded_names(seed: int, incarnation: int) -> Any:
    names: Any = tempfile._RandomNameSequence()  # type: ignore[attr-defined]
    # The sequence re-creates its generator when it sees another process id: pin both.
    names._rng = rng_stream(seed, f"agent.tempfile:{incarnation}")
    names._rng_pid = os.getpid()
    return names
