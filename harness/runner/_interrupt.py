"""Stop a run cleanly on Ctrl-C (SIGINT) or SIGTERM, never in the middle of a record.

Python turns SIGINT into a :class:`KeyboardInterrupt` wherever the main thread
happens to be, and SIGTERM, by default, ends the process with nothing kept.
:func:`stopping_cleanly` turns both into :class:`Interrupted` (a ``KeyboardInterrupt``,
so every ``finally`` still runs and the workers are killed), and :func:`critical`
holds one back while a finished case is being recorded: the record is written whole,
then the run stops::

    with stopping_cleanly():
        try:
            for case in cases:
                result = run(case)
                with critical():
                    journal.append(result)
        except Interrupted as stop:
            print(f"stopped by {stop.name}")
            return stop.exit_code

A second signal while the run stops is ignored: the first one is being honoured.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

#: The signals that stop a run cleanly.
STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """The run was told to stop by ``signum``; its exit code is ``128 + signum``, as
    shells report a process a signal ended (130 for SIGINT, 143 for SIGTERM)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class _Guard:
    def __init__(self) -> None:
        self.depth = 0
        self.pending: int | None = None
        self.raised = False

    def handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.raised:
            return
        if self.depth:
            self.pending = signum
            return
        self.raised = True
        raise Interrupted(signum)

    def leave(self) -> None:
        self.depth -= 1
        if not self.depth and self.pending is not None and not self.raised:
            self.raised = True
            raise Interrupted(self.pending)


# The guard in force, if any (a list, so the functions below change it without `global`).
_ACTIVE: list[_Guard] = []


@contextlib.contextmanager
def stopping_cleanly() -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`Interrupted` inside; the old handlers after.

    Outside the main thread (where Python runs no signal handler) it changes nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    guard = _Guard()
    previous = {number: signal.getsignal(number) for number in STOP_SIGNALS}
    for number in STOP_SIGNALS:
        signal.signal(number, guard.handle)
    _ACTIVE[:] = [guard]
    try:
        yield
    finally:
        _ACTIVE.clear()
        for number, handler in previous.items():
            signal.signal(number, _restorable(handler))


@contextlib.contextmanager
def critical() -> Iterator[None]:
    """Hold a stop signal back until the block is done, then raise it."""
    if not _ACTIVE:
        yield
        return
    guard = _ACTIVE[0]
    guard.depth += 1
    try:
        yield
    finally:
        guard.leave()


def reset_in_child() -> None:
    """Python's own handlers again, in a process forked while a run was guarded."""
    _ACTIVE.clear()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


_Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None


def _restorable(handler: _Handler) -> Callable[[int, FrameType | None], object] | int:
    # getsignal gives None for a handler set outside Python: the default is the nearest.
    return signal.SIG_DFL if handler is None else handler
