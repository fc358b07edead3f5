"""aiosqlite's statements run in turn with the case: one schedule, the same every run.

aiosqlite runs every statement of a connection on that connection's own thread, fed
by a queue, and answers the event loop through ``call_soon_threadsafe``. The loop
goes on meanwhile, so the operating system decided which came first: the commit on
aiosqlite's thread, or the loop's next request, tool call or checkpoint write. On a
loaded machine a LangGraph agent on ``AsyncSqliteSaver`` gave a case a different
crash state, a different conversation after the restart and a different verdict
from one run to the next; while the commit ran, the virtual clock could also jump
to the next timer, hours ahead (the harness's guard).

So, while an incarnation runs, a call put on a connection's queue by the case's
event loop is run to its end before the loop goes on: the loop thread waits until
aiosqlite's thread is back at its queue, its answer handed to the loop. The
statement still runs on aiosqlite's thread (a ``sqlite3`` connection belongs to the
thread that opened it). That is one schedule the real program could take, the one
where the thread started at once and the loop waited its turn, as
:mod:`harness.intercept._pools` does for thread pools. And until the answer arrives
the loop lets no virtual time pass (``expect_answer``), should the wait give up.
The wait has no bound of its own: a statement that waits on another connection's lock
ends at SQLite's busy timeout ("database is locked"), and one that waits for the loop
itself would hold the case until its timeout, which fails that one case.

Nothing here imports aiosqlite unless it is installed.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any, Final

from fakes import standing_by

# How long, in real time, a call waits for a connection thread that has not yet come
# to its queue (aiosqlite starts it just before the first call): a thread never
# started would otherwise hold the loop for ever.
_FIRST_TAKE_LIMIT_SECONDS: Final = 5.0
_LOOK_AGAIN_SECONDS: Final = 0.005


@contextmanager
def aiosqlite_in_turn() -> Iterator[None]:
    """aiosqlite's connections made meanwhile run their calls in turn (module docstring)."""
    core = _aiosqlite_core()
    if core is None:
        yield
        return
    saved = core.__dict__["SimpleQueue"]
    setattr(core, "SimpleQueue", _CallsInTurn)  # noqa: B010 - the name Connection() looks up
    try:
        yield
    finally:
        setattr(core, "SimpleQueue", saved)  # noqa: B010


@functools.cache
def _aiosqlite_core() -> ModuleType | None:
    if importlib.util.find_spec("aiosqlite") is None:
        return None
    import aiosqlite.core

    return aiosqlite.core


class _CallsInTurn:
    """A connection's call queue whose ``put_nowait`` from the case's loop returns once
    the connection's thread has run the call and answered (module docstring)."""

    def __init__(self) -> None:
        self._calls: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._turn = threading.Condition()
        self._put = 0  # calls put on the queue
        self._done = 0  # calls the thread has finished, answer sent, when back at the queue
        self._taken = 0
        self._worker: threading.Thread | None = None

    def put_nowait(self, item: tuple[asyncio.Future[Any] | None, Any]) -> None:
        loop = _case_loop_of(item[0])
        with self._turn:
            self._put += 1
            wanted = self._put
        if loop is not None:
            loop.expect_answer(item[0], self._working)
        self._calls.put_nowait(item)
        if loop is not None:
            self._wait_until_done(wanted)

    def get(self) -> Any:
        with self._turn:
            self._worker = threading.current_thread()
            self._done = self._taken  # back at the queue: every call it took is answered
            self._turn.notify_all()
        item = self._calls.get()
        with self._turn:
            self._taken += 1
        return item

    def _wait_until_done(self, wanted: int) -> None:
        with standing_by(), self._turn:
            if self._worker is None:
                self._turn.wait_for(lambda: self._worker is not None,
                                    timeout=_FIRST_TAKE_LIMIT_SECONDS)
            # The thread ends after the call that stops it and never comes back: looked
            # at between short waits.
            while self._done < wanted and self._working():
                self._turn.wait(_LOOK_AGAIN_SECONDS)

    def _working(self) -> bool:
        worker = self._worker
        return worker is None or worker.is_alive()


def _case_loop_of(future: asyncio.Future[Any] | None) -> Any:
    """The case's event loop ``future`` belongs to, when the call comes from it; else None
    (a finaliser's ``stop()`` outside any loop, a loop of a thread outside the case)."""
    if future is None:
        return None
    loop = future.get_loop()
    if getattr(loop, "expect_answer", None) is None:
        return None
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        return None
    return loop if running is loop else None
