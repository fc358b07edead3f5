"""The agent's stdout and stderr, kept per case apart from the harness's own output.

An agent that prints (a debug dump, a progress bar, 100 MB of logs) must not
write into the run's summary. A case's worker process points its file
descriptors 1 and 2 at a pipe the harness reads (:func:`send_output_to`), so
``print``, C extensions and child processes are all caught; the harness keeps the
last :data:`TAIL_BYTES` of each case and counts the rest (:class:`OutputTail`).
The harness reads the pipe, not the worker: what a case wrote before it hung or
died is kept too.

Example::

    tail = OutputTail()
    tail.add(b"step 1\\n")
    tail.take()                    # AgentOutput(tail='step 1\\n', written=7, kept=7)
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable
from typing import Final

from harness._redact import redact_values
from harness.runner._results import AgentOutput

#: What a case's output keeps: its last 64 KiB (a failure report shows the end of it).
TAIL_BYTES: Final = 64 * 1024
#: The most a case (or the agent's import and planning) may write to its stdout and stderr.
OUTPUT_CAP_BYTES: Final = 64 * 2**20
# One drain reads at most this much, so a child that writes without end cannot hold it.
_DRAIN_BYTES: Final = 4 * 1024 * 1024


def send_output_to(fd: int) -> None:
    """Point this process's stdout and stderr, Python's and the file descriptors, at ``fd``."""
    flush_output()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    # sys.stdout need not write to fd 1 (a test runner's capture, an embedding host).
    sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace",  # noqa: SIM115
                      closefd=False, buffering=1)
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace",  # noqa: SIM115
                      closefd=False, buffering=1)


def flush_output() -> None:
    """Write out what Python still buffers for stdout and stderr (before a result is sent)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # the agent may have replaced or closed them
            stream.flush()


class OutputTail:
    """The last :data:`TAIL_BYTES` a case wrote, and how many it wrote in all."""

    def __init__(self, keep: int = TAIL_BYTES) -> None:
        self.keep = keep
        self.data = bytearray()
        self.written = 0

    def add(self, chunk: bytes) -> None:
        self.written += len(chunk)
        self.data += chunk
        if len(self.data) > self.keep:
            del self.data[:-self.keep]

    def take(self, secrets: Iterable[str] = ()) -> AgentOutput | None:
        """What was written since the last take (``None``: nothing), secret values redacted."""
        if not self.written:
            return None
        text = redact_values(bytes(self.data).decode("utf-8", "replace"), secrets)
        output = AgentOutput(text, self.written, len(self.data))
        self.data.clear()
        self.written = 0
        return output


def drain(fd: int, tail: OutputTail | None) -> bool:
    """Read what ``fd`` (non-blocking) holds into ``tail`` (``None``: dropped); False at EOF."""
    read = 0
    while read < _DRAIN_BYTES:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return True
        except OSError:
            return False
        if not chunk:
            return False
        read += len(chunk)
        if tail is not None:
            tail.add(chunk)
    return True
