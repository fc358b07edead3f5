"""How long a process has had for itself: real time, less the time it waited for a CPU.

The real-time limits on a case and on importing an agent are there for an agent
that loops or blocks, not for a machine that is busy: on a loaded machine a process
spends most of its real time waiting its turn for a CPU, and an honest case that
needs a fifth of a second of work can take seconds of real time. So the limits are
read in the process's own time: the time it ran, and the time it was blocked on
something of its own (a sleep, a pipe, a lock), but not the time the kernel kept it
waiting in the run queue (``/proc/<pid>/schedstat``, second field, of its main
thread, which runs the case). Where that cannot be read, it is plain real time.

Example::

    own = OwnTime(process.pid)
    ...
    if own.seconds() >= timeout:   # a busy loop or a blocking call, whatever the load
        kill(process)
"""

from __future__ import annotations

import time


class OwnTime:
    """Real time since it was made, less the time ``pid``'s main thread waited for a CPU."""

    def __init__(self, pid: int | None) -> None:
        self._path = f"/proc/{pid}/task/{pid}/schedstat" if pid is not None else None
        self._started = time.monotonic()
        self._waited_before = self._waited_ns()

    def real_seconds(self) -> float:
        """The real seconds since it was made: never less than :meth:`seconds`."""
        return time.monotonic() - self._started

    def seconds(self) -> float:
        """The process's own seconds so far (never more than the real seconds)."""
        real = time.monotonic() - self._started
        now = self._waited_ns()
        if now is None or self._waited_before is None:
            return real
        return max(0.0, real - (now - self._waited_before) / 1e9)

    def _waited_ns(self) -> int | None:
        if self._path is None:
            return None
        try:
            with open(self._path, "rb") as schedstat:
                return int(schedstat.read().split()[1])
        except (OSError, IndexError, ValueError):
            return None  # no such file (another system), or the process is gone
