"""How the harness starts the processes agent code runs in (workers, guests).

Both :mod:`harness.runner._contain` (the case workers) and :mod:`harness.runner._guest`
(importing and checking an agent) start processes the same way; this module holds that
way, so neither imports the other.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
from typing import Any

# prctl options (linux/prctl.h).
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def process_context() -> Any:
    """The multiprocessing context the harness starts its workers and guests with."""
    # fork starts a worker in milliseconds with everything imported; spawn elsewhere.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def die_with_parent(parent: int) -> None:
    """Make this process (a worker, a guest) die with ``parent``, and adopt the orphans of
    its own children, so that nothing of a case outlives the harness."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            # Orphans of the agent's children come to this worker, not to init: the
            # sweep after each case finds them even when they left the session.
            libc.prctl(_PR_SET_CHILD_SUBREAPER, 1)
    if os.getppid() != parent:  # the parent went before the line above took effect
        os._exit(1)
