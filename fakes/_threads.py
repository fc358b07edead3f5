"""Let other threads of the process finish what they are doing, in real time.

A framework does part of its work on threads of its own: LangGraph saves a
checkpoint on a background thread while the next step runs (its default
``durability="async"``), aiosqlite runs every statement on a thread of its
connection. Where the world must take a decision that depends on that work — the
state a crash leaves, whether virtual time may move on — deciding while such a
thread is in the middle of it makes the outcome depend on the machine's load.

:func:`settle_threads` waits, in real time, until every thread it is given is blocked
(waiting on a lock, a queue, a socket, a sleep) and has stayed so for a moment:
its state in ``/proc`` says it sleeps, and its CPU time has not moved. Work
under way is then done; what a thread waits for comes from outside it. The wait
is bounded: a thread that never blocks (a busy loop) is given up on after
``limit`` seconds, and the decision is taken anyway. Where ``/proc`` cannot be
read (not Linux), nothing is waited for.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Final

# Taken before any case patches the time module: these waits are real.
_REAL_MONOTONIC: Final = time.monotonic
_REAL_SLEEP: Final = time.sleep
_QUIET_SECONDS: Final = 0.003
_POLL_SECONDS: Final = 0.0005
# While a thread looked at runs (or waits for a CPU), the looks come further and further
# apart, up to this: a look costs two reads of ``/proc``, and on a loaded machine a busy
# job was looked at thousands of times a run (a seventh of an OpenAI Agents SDK case's
# CPU time), each look telling only that it still ran. Once every thread waits, the
# looks are close again, so the quiet period is timed as finely as before.
_POLL_MAX_SECONDS: Final = 0.004
_WAITING_STATES: Final = frozenset(b"SDtTIZX")
# Each thread's scheduler statistics when it was last seen settled: a thread still
# asleep with the same figures has not run since, and needs no quiet period again.
_SETTLED: dict[int, bytes] = {}

# Threads waiting in real time on the harness itself (a tool's effect told over a pipe):
# asleep, yet at work for the world, so never taken for settled (see at_work).
_AT_WORK: set[int] = set()

# Threads that wait, by design, for another thread of the case to finish its turn (an
# event loop waiting for its executor's job): they do nothing else meanwhile, so nothing
# waits for them (the job, at a crash, settles the case's threads: the loop among them).
_STANDING_BY: set[int] = set()

#: The threads of the cases (the thread running an incarnation, and the threads the
#: cases started): what the world waits for before it decides (see :func:`settle_threads`).
CASE_THREADS: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


def settle_threads(threads: Iterable[threading.Thread], *, limit: float = 5.0,
           wait: Callable[[float], bool] | None = None) -> bool:
    """Wait until every live thread of ``threads`` is blocked and quiet; see the module doc.

    ``wait(seconds)`` waits between two looks (a real sleep by default); one that
    returns True ends the wait early (the caller has something to do: the loop's
    self-pipe woke). Returns whether the threads settled (False: gave up, or woken).
    """
    ids = [t.native_id for t in threads
           if t is not threading.current_thread() and t.is_alive() and t.native_id
           and t.native_id not in _STANDING_BY]
    if not ids:
        return True
    started = quiet_since = _REAL_MONOTONIC()
    seen: dict[int, tuple[bool, bytes]] | None = None
    poll = _POLL_SECONDS
    while True:
        look = _stats(ids)
        if look is None:
            return True  # nothing to read: do not wait on what cannot be seen
        now = _REAL_MONOTONIC()
        at_work = not _AT_WORK.isdisjoint(look)
        if not at_work and _unchanged_since_settled(look):
            return True  # asleep, and has not run at all since it last settled
        waiting = all(state for state, _ in look.values())
        if at_work or look != seen or not waiting:
            seen, quiet_since = look, now
        elif now - quiet_since >= _QUIET_SECONDS:
            _SETTLED.update({tid: ran for tid, (_, ran) in look.items()})
            return True
        if now - started >= limit:
            return False
        # Still running (or at work for the harness): look again later. Every thread
        # waiting: time the quiet period closely.
        poll = min(poll * 2, _POLL_MAX_SECONDS) if at_work or not waiting else _POLL_SECONDS
        if wait is not None:
            if wait(poll):
                return False
        else:
            _REAL_SLEEP(poll)


@contextmanager
def at_work() -> Iterator[None]:
    """The calling thread waits on the harness meanwhile: :func:`settle_threads` waits
    for it as for a thread that runs (under load the answer can take longer than the
    quiet a settled thread shows, and a tool's effect then landed after the crash)."""
    with _listed(_AT_WORK):
        yield


@contextmanager
def standing_by() -> Iterator[None]:
    """The calling thread waits for another thread of the case meanwhile, and does nothing
    else: :func:`settle_threads` does not wait for it (it would wait for the thread it
    waits on, each for the other, until the limit)."""
    with _listed(_STANDING_BY):
        yield


@contextmanager
def _listed(threads: set[int]) -> Iterator[None]:
    """The calling thread in ``threads`` meanwhile."""
    tid = threading.get_native_id()
    threads.add(tid)
    try:
        yield
    finally:
        threads.discard(tid)


def _unchanged_since_settled(look: dict[int, tuple[bool, bytes]]) -> bool:
    return all(waiting and _SETTLED.get(tid) == ran for tid, (waiting, ran) in look.items())


def _stats(ids: list[int]) -> dict[int, tuple[bool, bytes]] | None:
    """Each thread: whether it waits, and its scheduler statistics (None: /proc unreadable)."""
    look: dict[int, tuple[bool, bytes]] = {}
    for tid in ids:
        try:
            with open(f"/proc/self/task/{tid}/stat", "rb") as stat:
                text = stat.read()
            with open(f"/proc/self/task/{tid}/schedstat", "rb") as schedstat:
                ran = schedstat.read()
        except FileNotFoundError:
            continue  # ended meanwhile
        except OSError:
            return None
        state = text[text.rindex(b")") + 2]
        look[tid] = (state in _WAITING_STATES, ran)
    return look


def settle_case_threads() -> bool:
    """:func:`settle_threads` the threads of the cases (what a crash waits for)."""
    return settle_threads(CASE_THREADS)
