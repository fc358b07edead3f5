"""Virtual time for asyncio: timers fire in order, and the clock jumps to the next one.

A :class:`VirtualClock` owns a virtual "now". :meth:`VirtualClock.run` drives a
coroutine on an event loop whose ``time()`` is that virtual now and whose
selector, when nothing is ready, jumps the clock to the next timer instead of
sleeping. Stalls, idle watchdogs, backoff and ``Retry-After`` therefore cost no
wall time, and the order of events depends only on the program, never on the
machine's speed.

Example::

    clock = VirtualClock()

    async def wait_two_minutes() -> float:
        await asyncio.sleep(120)
        return clock.now()

    assert clock.run(wait_two_minutes()) == 120.0

One clock can run several coroutines one after another (an agent, its crash, a
new incarnation): time keeps going forward across them, like the world's clock.

Child processes (a subprocess tool) run in real time, so the selector must decide
when a running child may be overtaken by virtual time (its tool's timeout firing).
The rule, chosen so that which timers fire never depends on how busy the machine is:

* while any thread of the child's process group runs, could run (``R``: a loaded
  machine only makes it wait for a CPU) or waits on the kernel's own I/O (``D``),
  the clock holds still until the group has run ``_PROCESS_GRACE_SECONDS`` on a CPU
  (its threads' own run time, which a loaded machine stretches in real time but never
  shortens), or at most ``_PROCESS_REAL_LIMIT_SECONDS`` of real time;
* when every thread of the group has stayed blocked (``S``, or stopped, or a
  zombie) without running once for ``_CHILD_QUIET_SECONDS`` of real time in a row,
  the group waits on the outside world (a timer of its own longer than that, a pipe
  nobody writes) and the clock may jump at once.

A child blocked in one stretch for less than ``_CHILD_QUIET_SECONDS`` (``sleep
0.05``) therefore always exits before virtual time moves, and one blocked longer
(``sleep 30``) is always overtaken: how long a blocked child stays blocked is set by
what it waits for, not by the load, and the load only stretches the running parts,
which keep the clock still. The one boundary is a single blocked stretch of about
``_CHILD_QUIET_SECONDS`` itself. Without ``/proc`` (or when it cannot tell) the
grace of ``_PROCESS_GRACE_SECONDS`` is read in real time instead.

A worker thread of the loop (``asyncio.to_thread``, ``run_in_executor``) that calls
``time.sleep`` (through the case's patched :mod:`time`, :meth:`VirtualClock.sleep_parked`)
waits in virtual time beside the loop, as it would in real time: it is parked until the
clock reaches its end, and the loop's timers (a cancel among them) fire meanwhile. A run
that ends while such a thread still sleeps cannot exit before it wakes (``asyncio.run``
waits for its executor): the clock then moves on to that end, and :attr:`VirtualClock.held`
says from when to when. A thread working beside the loop (a framework's daemon that hands
it work: DBOS's queue thread) waits in virtual time the same way through
:meth:`VirtualClock.park_beside`, its timer among the loop's; the run ending does not wait
for it (a daemon does not hold a process), and its wait is then ended by nothing but what
it waits for.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import itertools
import os
import selectors
import threading
import time
import weakref
from collections.abc import Callable, Coroutine
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar, final

from fakes._crashdisk import ProcessGone, SimulatedCrash
from fakes._threads import CASE_THREADS, settle_threads, standing_by
from harness._errors import VirtualDeadlockError
from harness.ports import ClosesOnExit

T = TypeVar("T")

if TYPE_CHECKING:
    from _typeshed import FileDescriptorLike

# How long the selector waits for real I/O (a subprocess tool's pipes) before it
# lets virtual time jump. Only loops with such file descriptors registered pay it;
# pure in-process runs never touch the wall clock.
_REAL_IO_GRACE_SECONDS = 0.01
# The most it waits for a child process to exit before virtual time may jump past it
# (a subprocess tool's timeout) while the child keeps running. A quick command (a few
# milliseconds, a few hundred on a loaded machine) always exits within it, and one
# that waits on something (``sleep 30``) is overtaken sooner, by the quiet rule below.
_PROCESS_GRACE_SECONDS = 2.0
# The most real time a child that keeps running (or waiting for a CPU, or in the
# kernel's I/O) may hold the clock, however little CPU it gets: a machine loaded past
# reason, or a child stuck in ``D``, still lets the timeout fire in the end.
_PROCESS_REAL_LIMIT_SECONDS = 120.0
# How long a child's whole process group must stay blocked without running for the
# clock to jump before the grace is over (see the module docstring), and how often
# the selector looks at it meanwhile. The quiet time is far above any one blocked
# stretch of a quick command (a pipe between two of its processes, a short sleep)
# and far below the grace it spares.
_CHILD_QUIET_SECONDS = 0.25
_CHILD_POLL_SECONDS = 0.01
# Thread states (``/proc/<pid>/stat``) of a thread that is waiting on something
# outside its process group, or will never run again: sleeping, stopped, traced,
# zombie, dead. Running or runnable (``R``) and uninterruptible I/O (``D``) are not.
_WAITING_STATES = frozenset(b"STtZXx")


class ClockWitness(Protocol):
    """Where each move of a clock is told as it is made, outside the process the clock
    lives in (:mod:`harness.runner._ledger_pipe`): a sealed worker's agent can change
    the clock, and the harness keeps its own."""

    def holding(self) -> AbstractContextManager[object]:
        """Held while the clock moves and tells it."""
        ...

    def moved(self, stream: int, to: float, why: str, before: float) -> None:
        """Tell that the clock named ``stream`` moved from ``before`` to ``to``, and why."""
        ...


@final
class VirtualClock:
    """A virtual clock, in seconds since ``start``; see the module docstring."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        # None: this process's clock is the only one (a test, harness serve); else each
        # move is told, named ``stream`` (a world's copy has a stream of its own).
        self.witness: ClockWitness | None = None
        self.stream = 0
        #: (when the run returned, when its last sleeping worker thread woke), one per
        #: run that ended with a worker thread asleep in :meth:`sleep_parked`.
        self.held: list[tuple[float, float]] = []
        #: Whether the process the loop runs has died (the world's crash): a loop
        #: then never moves the clock, and a wait for time ends the run
        #: (:class:`~fakes.ProcessGone`).
        self.process_dead: Callable[[], bool] = _alive
        #: Whether a loop this clock drives runs each ``run_in_executor`` job in turn:
        #: the loop waits until the job has answered, handed something to the loop,
        #: gone to sleep in virtual time or blocked (see ``_Job.wait_for_turn``). Set
        #: while an unchanged agent runs, whose threads must run one way.
        self.jobs_in_turn = False

    def now(self) -> float:
        """The virtual time, in seconds."""
        return self._now

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of virtual time (on a loop this clock drives)."""
        await asyncio.sleep(seconds)

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds`` (never backwards)."""
        if seconds < 0:
            raise ValueError(f"cannot move a clock backwards by {seconds!r} seconds")
        if self.witness is None or not seconds:
            self._now += seconds
        else:
            self._moved(lambda: self._now + seconds, "advance")

    def _jump_to(self, when: float, why: str = "timer") -> None:
        if self.witness is None:
            self._now = max(self._now, when)
        elif when > self._now:
            self._moved(lambda: max(self._now, when), why)

    def _moved(self, to: Callable[[], float], why: str) -> None:
        """Move to ``to()`` and tell the witness, with no other move between the two."""
        witness = self.witness
        assert witness is not None
        with witness.holding():
            before = self._now
            now = self._now = to()
            witness.moved(self.stream, now, why, before)

    def sleep_parked(self, seconds: float) -> bool:
        """Sleep ``seconds`` of virtual time on a worker thread of a loop this clock drives.

        The thread waits (in real time) until the loop's clock reaches the end; the
        loop goes on meanwhile. False, and no wait, when the calling thread is no such
        worker (the caller then moves the clock itself, as a blocking sleep does).
        """
        loop = getattr(_WORKER, "loop", None)
        if not isinstance(loop, _VirtualEventLoop) or loop._virtual_clock is not self \
                or loop.is_closed():
            return False
        return loop.park(_WORKER.job, self._now + seconds)

    def park_beside(self, seconds: float, wake: Callable[[], None], *,
                    at_end: bool = False) -> Callable[[], None] | None:
        """Call ``wake()`` when the clock has moved ``seconds`` on: a timer of the loop that
        runs on this clock, for a thread working beside that loop (a framework's poller
        that hands the loop its work), whose wait is the loop's to end.

        Returns what withdraws the timer (the thread woke otherwise), or None when no loop
        runs on the clock: nothing would move it. A timer still set when the run ends is
        dropped without a call (the process is over: its daemon threads run no more; what
        stops them is what they wait for), unless ``at_end``: then it is called (a plain
        sleep, which nothing else ends), and the clock does not move for it.
        """
        loop = _DRIVING.get(self)
        if loop is None:
            return None
        return loop.park_beside(self._now + seconds, wake, at_end=at_end)

    def new_event_loop(self) -> asyncio.AbstractEventLoop:
        """A new event loop driven by this clock (for code that runs its own loop)."""
        return _VirtualEventLoop(self)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` to completion on a fresh loop driven by this clock."""
        with self.runner() as runner:
            return runner.run(coro)

    def runner(self) -> ClockRunner:
        """A loop driven by this clock for several coroutines in turn (see :class:`ClockRunner`)."""
        return ClockRunner(self)


# Each clock's loop that runs in the case's own thread, while it runs: where a thread
# working beside it keeps its timers (VirtualClock.park_beside). Kept off the clock, which
# a world's copy copies.
_DRIVING: weakref.WeakKeyDictionary[VirtualClock, _VirtualEventLoop] = \
    weakref.WeakKeyDictionary()


@final
class ClockRunner(ClosesOnExit):
    """Runs coroutines one after another on one loop driven by a clock.

    What one leaves behind (tasks, timers, async generators) is cancelled before
    the next starts, as if each had a loop of its own; creating and closing a loop
    costs more than a short incarnation of an agent, which a crash case runs
    several of.

    >>> clock = VirtualClock()
    >>> with clock.runner() as runner:
    ...     runner.run(clock.sleep(5)), runner.run(clock.sleep(2)), clock.now()
    (None, None, 7.0)
    """

    def __init__(self, clock: VirtualClock) -> None:
        self._loop = _VirtualEventLoop(clock)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` to completion; then cancel whatever it left pending."""
        returned = False
        try:
            result = self._loop.run_until_complete(coro)
            returned = True
            return result
        finally:
            # A worker thread still asleep holds the process until it wakes; one of a
            # process that crashed is gone with it, and moves no time.
            self._loop.release_parked(wait_out=returned)
            _settle(self._loop)

    def close(self) -> None:
        self._loop.close()


def _settle(loop: _VirtualEventLoop) -> None:
    """Cancel the tasks, timers and async generators a finished coroutine left on ``loop``.

    A crashed incarnation's leftovers that wait for time after their cancellation are
    dropped where they stand: a dead process has no time to give them.
    """
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    try:
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
    except ProcessGone:
        for task in asyncio.all_tasks(loop):
            task._log_destroy_pending = False  # type: ignore[attr-defined]
    loop.drop_leftovers()


def _alive() -> bool:
    return False


class _VirtualSelector(selectors.DefaultSelector):
    """Polls real I/O without waiting, then jumps virtual time to the next timer."""

    def __init__(self, clock: VirtualClock) -> None:
        super().__init__()
        self._clock = clock
        self._wake_fd: int | None = None
        self._threads_busy: Callable[[], bool] = lambda: False
        self._next_wake: Callable[[], float | None] = lambda: None
        self._wake_parked: Callable[[], None] = lambda: None
        # Run by a thread outside the case (_VirtualEventLoop.run_forever): an ordinary
        # selector, on real time.
        self.real_time = False
        # File descriptors that say a child process exited (pidfds), each with the
        # process group of its child (None: unknown): see the module docstring.
        self.process_fds: dict[int, int | None] = {}

    def watch(self, wake_fd: int, threads_busy: Callable[[], bool],
              next_wake: Callable[[], float | None] = lambda: None,
              wake_parked: Callable[[], None] = lambda: None) -> None:
        """Learn the loop's self-pipe, how to tell whether worker threads still run, and
        when the first worker parked in virtual sleep wakes (and how to wake it)."""
        self._wake_fd = wake_fd
        self._threads_busy = threads_busy
        self._next_wake = next_wake
        self._wake_parked = wake_parked

    def select(
        self, timeout: float | None = None
    ) -> list[tuple[selectors.SelectorKey, int]]:
        if self.real_time:
            return super().select(timeout)
        ready = super().select(0)
        if ready or timeout == 0:
            return ready
        if self._threads_busy():
            # A worker thread (``run_in_executor``: the SDKs probe the platform there)
            # is part of the program, not of the outside world: however long it takes
            # in wall time, no virtual time passes until it reports back through the
            # self-pipe. Jumping to the next timer meanwhile would let a slow machine
            # fire a timeout that a fast one never sees.
            return super().select(None)
        woken = self._settle_case_threads()
        if woken:
            return woken
        if self._has_real_io():
            if self.process_fds:
                ready = self._wait_for_children()
            else:
                ready = super().select(_REAL_IO_GRACE_SECONDS)
            if ready:
                return ready
        if self._clock.process_dead():
            raise ProcessGone
        wake = self._next_wake()
        if wake is not None and (timeout is None or wake <= self._clock.now() + timeout):
            self._clock._jump_to(wake, "parked")  # a parked worker's sleep ends first
            self._wake_parked()
            return []
        if timeout is None:
            if self._has_real_io():
                return super().select(None)
            raise VirtualDeadlockError(self._clock.now())
        self._clock._jump_to(self._clock.now() + timeout)
        return []

    def _settle_case_threads(self) -> list[tuple[selectors.SelectorKey, int]]:
        """Let the case's other threads finish what they are doing before time moves on.

        A thread the case started may be about to hand the loop a result
        (aiosqlite runs each statement on a thread of its own and answers through
        ``call_soon_threadsafe``): jumping to the next timer, or calling the loop
        deadlocked, while it works would make the outcome depend on the machine's
        load. What the self-pipe brings meanwhile is returned, as a ready loop.
        """
        if not any(t.is_alive() for t in CASE_THREADS if t is not threading.current_thread()):
            return []
        woken: list[tuple[selectors.SelectorKey, int]] = []

        def wait(seconds: float) -> bool:
            woken.extend(super(_VirtualSelector, self).select(seconds))
            return bool(woken)

        settle_threads(CASE_THREADS, wait=wait)
        # What a thread sent just before it went quiet is in the self-pipe now.
        return woken or super().select(0)

    def _has_real_io(self) -> bool:
        return any(key.fd != self._wake_fd for key in self.get_map().values())

    def _wait_for_children(self) -> list[tuple[selectors.SelectorKey, int]]:
        """Real I/O ready within the grace, or ``[]`` once the children wait on the
        outside world or the grace is over (the rule of the module docstring)."""
        groups = {group for group in self.process_fds.values() if group is not None}
        known = len(groups) == len(set(self.process_fds.values()))
        started = quiet_since = time.monotonic()
        seen: dict[int, bytes] | None = None
        ran = _RunTime()
        while True:
            ready = super().select(_CHILD_POLL_SECONDS)
            if ready:
                return ready
            now = time.monotonic()
            look = _look_at_groups(groups) if known else None
            if look is not None:
                ran.add(look.run_ns)
            if self._grace_over(now - started, ran.seconds if look is not None else None):
                return []
            threads = look.blocked if look is not None else None
            if threads is None or threads != seen:
                seen, quiet_since = threads, now
            elif now - quiet_since >= _CHILD_QUIET_SECONDS:
                return []

    @staticmethod
    def _grace_over(real: float, ran: float | None) -> bool:
        """Whether the children have had their grace: their run time when it can be
        seen (the load cannot change it), else real time."""
        if real >= _PROCESS_REAL_LIMIT_SECONDS:
            return True
        return (ran if ran is not None else real) >= _PROCESS_GRACE_SECONDS


class _VirtualEventLoop(asyncio.SelectorEventLoop):
    def __init__(self, clock: VirtualClock) -> None:
        self._virtual_clock = clock
        self._threads_running = 0
        # Worker threads asleep in virtual time (VirtualClock.sleep_parked), by their job.
        self._parked: dict[_Job, float] = {}
        # Timers of threads working beside the loop (VirtualClock.park_beside): each the
        # call that wakes its thread, and when.
        self._beside: dict[_Beside, float] = {}
        self._parked_lock = threading.Lock()
        # Answers a thread of the case owes the loop (aiosqlite's connection thread), each
        # with whether that thread still lives: see expect_answer.
        self._owed: dict[asyncio.Future[Any], Callable[[], bool]] = {}
        selector = self._virtual_selector = _VirtualSelector(clock)
        super().__init__(selector)
        wake_fd: int = self._ssock.fileno()  # type: ignore[attr-defined]
        selector.watch(wake_fd, self._threads_busy, self._next_wake, self._wake_due)
        # The thread that made the loop; see run_forever.
        self._made_by = threading.current_thread()
        self._real_time = False

    def run_forever(self) -> None:
        """Run the loop; on real time when the thread running it is not the case's.

        A library makes its loop on the case's thread and hands it to a daemon thread of
        its own (LanceDB's ``BackgroundEventLoop``, CrewAI's event bus): such a thread
        lives on the real clock (:mod:`harness.intercept._time`), and so does its loop,
        an ordinary one. It waits for work from other threads
        (``run_coroutine_threadsafe``) with nothing scheduled, which on virtual time
        would read as a deadlock, and its own timers are no part of the case's.
        """
        here = threading.current_thread()
        self._real_time = here is not self._made_by and here not in CASE_THREADS
        self._virtual_selector.real_time = self._real_time
        clock = self._virtual_clock
        driving = not self._real_time and clock not in _DRIVING
        if driving:
            _DRIVING[clock] = self
        try:
            super().run_forever()
        finally:
            if driving:
                del _DRIVING[clock]

    def _threads_busy(self) -> bool:
        """Whether a worker thread the loop still awaits is at work, not asleep in virtual
        time, or a thread of the case owes the loop an answer (:meth:`expect_answer`)."""
        with self._parked_lock:
            asleep = sum(1 for job in self._parked if not job.future_done())
            owed = any(alive() for future, alive in self._owed.items() if not future.done())
        return owed or self._threads_running > asleep

    def expect_answer(self, future: asyncio.Future[Any], alive: Callable[[], bool]) -> None:
        """Hold virtual time until a thread answers ``future`` (through
        ``call_soon_threadsafe``), while ``alive()`` says that thread still lives.

        For a library's own thread the loop does not run (aiosqlite runs every statement
        on its connection's): it is at work from the moment it is handed a call to the
        moment its answer arrives, however long that takes on a loaded machine. Watching
        the thread's state instead (:func:`settle_threads`) is a guess that fails when the
        machine is busy: the clock jumped to the next timer while a commit was under way,
        and two runs of one case differed. Call it on the loop's own thread.
        """
        with self._parked_lock:
            self._owed[future] = alive
        future.add_done_callback(self._answered)

    def _answered(self, future: asyncio.Future[Any]) -> None:
        with self._parked_lock:
            self._owed.pop(future, None)

    def _next_wake(self) -> float | None:
        with self._parked_lock:
            return min((*self._parked.values(), *self._beside.values()), default=None)

    def _wake_due(self) -> None:
        """Wake every parked worker, and every thread beside the loop, whose sleep has
        ended by now."""
        now = self._virtual_clock.now()
        with self._parked_lock:
            due = [job for job, until in self._parked.items() if until <= now]
            for job in due:
                del self._parked[job]
                job.awake.set()
            beside = sorted((until, entry.order, entry)
                            for entry, until in self._beside.items() if until <= now)
            for _, _, entry in beside:
                del self._beside[entry]
        for _, _, entry in beside:  # outside the lock: a wake takes the thread's own
            entry.wake()

    def park_beside(self, until: float, wake: Callable[[], None], *,
                    at_end: bool) -> Callable[[], None] | None:
        """A timer at ``until`` calling ``wake()`` (VirtualClock.park_beside), or None when
        the loop no longer runs; returns what withdraws it."""
        with self._parked_lock:
            if not self.is_running():
                return None
            entry = _Beside(wake, next(_BESIDE_ORDER), at_end)
            self._beside[entry] = until
        self._write_to_self()  # type: ignore[attr-defined]  # the selector may wait on us

        def withdraw() -> None:
            with self._parked_lock:
                self._beside.pop(entry, None)

        return withdraw

    def park(self, job: _Job, until: float) -> bool:
        """Block the calling worker thread until the clock reaches ``until``.

        False at once when the loop no longer runs: nothing would move the clock (the
        run is over and :meth:`release_parked` has been; a later sleep is a plain one).
        """
        job.awake.clear()
        with self._parked_lock:
            if not self.is_running():
                return False
            self._parked[job] = until
        self._write_to_self()  # type: ignore[attr-defined]  # the selector may wait on us
        job.hand_back()  # asleep in virtual time: the loop moves the clock
        job.awake.wait()
        return True

    def release_parked(self, *, wait_out: bool) -> None:
        """Wake every parked worker once the run is over; ``wait_out``: the clock first
        moves to the last one's end, as the process cannot exit before (``held``)."""
        with self._parked_lock:
            parked, self._parked = self._parked, {}
            beside, self._beside = self._beside, {}
        for entry in sorted(beside, key=lambda entry: entry.order):
            if entry.at_end:  # see VirtualClock.park_beside
                entry.wake()
        if not parked:
            return
        if wait_out:
            clock = self._virtual_clock
            until = max(parked.values())
            clock.held.append((clock.now(), until))
            clock._jump_to(until, "held")
        for job in parked:
            job.awake.set()
        settle_threads(CASE_THREADS)  # the woken threads finish before the world goes on

    def call_exception_handler(self, context: dict[str, Any]) -> None:
        """Report an error nobody handled, unless it is the crash: the process it ended
        never logs a task's or future's exception as unretrieved (AutoGen runs each tool
        call in a task of its own). Collected later, in another case of the worker, it was
        printed in that case's output, a crash's traceback in a case with none."""
        if isinstance(context.get("exception"), SimulatedCrash | ProcessGone):
            return
        super().call_exception_handler(context)

    def time(self) -> float:
        if self._real_time:
            return time.monotonic()
        return self._virtual_clock.now()

    def add_process_reader(self, pidfd: int, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the process of ``pidfd`` exits; until then virtual time
        holds still while the child's process group runs (see the module docstring)."""
        self._virtual_selector.process_fds[pidfd] = _process_group_of(pidfd)
        self.add_reader(pidfd, callback)

    def remove_reader(self, fd: FileDescriptorLike) -> bool:
        if isinstance(fd, int):
            self._virtual_selector.process_fds.pop(fd, None)
        return super().remove_reader(fd)

    def drop_leftovers(self) -> None:
        """Forget the callbacks and timers still queued, as closing the loop would.

        A fresh loop per coroutine would never run them; one loop reused must not
        either (a timer of a crashed incarnation firing in the next one).
        """
        for handle in (*self._ready, *self._scheduled):  # type: ignore[attr-defined]
            handle.cancel()
        self._ready.clear()  # type: ignore[attr-defined]
        self._scheduled.clear()  # type: ignore[attr-defined]
        # shutdown_asyncgens() marks the loop as finished with async generators; the
        # next coroutine's (an httpx client's auth flow) are as welcome as on a new loop.
        self._asyncgens_shutdown_called = False

    def run_in_executor(
        self, executor: concurrent.futures.Executor | None, func: Callable[..., T], *args: object
    ) -> asyncio.Future[T]:
        job = _Job(self)
        if self._virtual_clock.jobs_in_turn:
            future = self._in_turn(executor, job, func, args)
        else:
            future = super().run_in_executor(executor, job.wrap(func), *args)
        job.future = future
        self._threads_running += 1
        future.add_done_callback(self._thread_finished)
        if self._virtual_clock.jobs_in_turn:
            job.wait_for_turn()
        return future

    def _in_turn(self, executor: concurrent.futures.Executor | None, job: _Job,
                 func: Callable[..., T], args: tuple[object, ...]) -> asyncio.Future[T]:
        """``run_in_executor``'s own steps, with the job told when its answer is posted."""
        self._check_closed()  # type: ignore[attr-defined]
        if executor is None:
            self._check_default_executor()  # type: ignore[attr-defined]
            executor = getattr(self, "_default_executor", None)
            if executor is None:
                executor = concurrent.futures.ThreadPoolExecutor(thread_name_prefix="asyncio")
                setattr(self, "_default_executor", executor)  # noqa: B010 - the base loop's
        job.executor = executor
        done = executor.submit(job.wrap(func), *args)
        future = asyncio.wrap_future(done, loop=self)
        # Registered after wrap_future's own callback: the answer is posted to the loop
        # before the job hands the turn back.
        done.add_done_callback(job.hand_back)
        return future

    def call_soon_threadsafe(  # type: ignore[override]  # the same, without TypeVarTuple
            self, callback: Callable[..., object], *args: Any,
            context: contextvars.Context | None = None) -> asyncio.Handle:
        handle = super().call_soon_threadsafe(callback, *args, context=context)
        job = getattr(_WORKER, "job", None)
        if job is not None and job.loop is self:
            job.hand_back()  # the job hands the loop work, or waits for it: the loop goes on
        return handle

    def _thread_finished(self, _future: asyncio.Future[Any]) -> None:
        self._threads_running -= 1


# How often a loop waiting for its job's turn looks whether the job blocked, and how long
# one look at its thread lasts at most (real seconds).
_TURN_LOOK_SECONDS: Final = 0.002
_TURN_SETTLE_SECONDS: Final = 0.05
# The loop and job a worker thread runs for, while it runs one (VirtualClock.sleep_parked).
_WORKER = threading.local()


@dataclass(eq=False)
class _Beside:
    """A thread's timer beside the loop: what wakes it, and its place among timers set at
    the same instant (the first set wakes first)."""

    wake: Callable[[], None]
    order: int
    at_end: bool  # called when the run ends, if still set


_BESIDE_ORDER: Final = itertools.count()


@dataclass(eq=False)
class _Job:
    """One call a loop handed its executor: the thread's way back to the loop's clock."""

    loop: _VirtualEventLoop
    future: asyncio.Future[Any] | None = None
    awake: threading.Event = field(default_factory=threading.Event)
    # In turn (VirtualClock.jobs_in_turn): set once the loop may go on.
    turn_over: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    executor: concurrent.futures.Executor | None = None

    def future_done(self) -> bool:
        return self.future is not None and self.future.done()

    def wrap(self, func: Callable[..., T]) -> Callable[..., T]:
        def run(*args: Any) -> T:
            self.thread = threading.current_thread()
            _WORKER.loop, _WORKER.job = self.loop, self
            try:
                return func(*args)
            finally:
                _WORKER.loop = _WORKER.job = None
        return run

    def hand_back(self, _done: object = None) -> None:
        self.turn_over.set()

    def wait_for_turn(self) -> None:
        """Hold the loop's thread until the job has answered, posted to the loop, gone to
        sleep in virtual time, or blocked on something else (the loop, say, through a lock
        or an event: it is then let go, as :func:`settle_threads` sees it).

        A pool runs a job beside the loop, and the operating system decided which of the
        two reached the world first: a LangGraph tool run in the executor while the loop
        saved the last checkpoint on aiosqlite's thread gave a crash at one commit two
        different states. Waiting is the schedule where the job ran at once, the same in
        every run.
        """
        with standing_by():
            while not self.turn_over.wait(_TURN_LOOK_SECONDS):
                if self._blocked():
                    return

    def _blocked(self) -> bool:
        """Whether the job's thread (or, not started yet, every thread of its pool: all
        busy with jobs waiting for the loop) waits on something and stays quiet."""
        if self.thread is not None:
            threads = [self.thread]
        else:
            threads = list(getattr(self.executor, "_threads", ()))
            if not threads:
                return False  # the pool is starting its first thread
        if not any(thread.is_alive() for thread in threads):
            return True
        return settle_threads(threads, limit=_TURN_SETTLE_SECONDS, wait=self.turn_over.wait)


def _process_group_of(pidfd: int) -> int | None:
    """The process group of the process ``pidfd`` refers to, or None if it cannot tell."""
    try:
        with open(f"/proc/self/fdinfo/{pidfd}", encoding="ascii") as info:
            pid = next(int(line.split()[1]) for line in info if line.startswith("Pid:"))
        return os.getpgid(pid) if pid > 0 else None
    except (OSError, StopIteration, ValueError):
        return None


@dataclass(frozen=True)
class _GroupLook:
    """One look at every thread of the children's process groups."""

    # Each thread's scheduler statistics (time run, time waited for a CPU, times run),
    # or None if one is not blocked (running, runnable, in I/O). Two equal answers some
    # time apart mean that no thread ran in between, and that none appeared or ended.
    blocked: dict[int, bytes] | None
    # Each thread's time run on a CPU so far, in nanoseconds.
    run_ns: dict[int, int]


def _look_at_groups(groups: set[int]) -> _GroupLook | None:
    """Every thread of the process ``groups``, or None if nothing can be seen."""
    stats: dict[int, bytes] = {}
    all_blocked = True
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    for name in names:
        if not name.isdigit():
            continue
        try:
            if _stat_fields(f"/proc/{name}/stat")[2] not in groups:
                continue
            for tid in os.listdir(f"/proc/{name}/task"):
                fields = _stat_fields(f"/proc/{name}/task/{tid}/stat")
                all_blocked = all_blocked and fields[0] in _WAITING_STATES
                with open(f"/proc/{name}/task/{tid}/schedstat", "rb") as schedstat:
                    stats[int(tid)] = schedstat.read()
        except (OSError, IndexError, ValueError):
            continue  # a process or thread that ended meanwhile: the next look sees it gone
    if not stats:
        return None
    run_ns = {tid: int(stat.split(maxsplit=1)[0]) for tid, stat in stats.items()}
    return _GroupLook(stats if all_blocked else None, run_ns)


class _RunTime:
    """The CPU time the children's threads have run since the first look.

    A thread seen at the first look counts from what it had run then; one that
    appeared later counts whole; one that ended keeps what it was last seen to run.
    """

    def __init__(self) -> None:
        self._first: dict[int, int] | None = None
        self._last: dict[int, int] = {}

    def add(self, run_ns: dict[int, int]) -> None:
        if self._first is None:
            self._first = dict(run_ns)
        self._last.update(run_ns)

    @property
    def seconds(self) -> float:
        first = self._first or {}
        return sum(ns - first.get(tid, 0) for tid, ns in self._last.items()) / 1e9


def _stat_fields(path: str) -> tuple[int, int, int]:
    """State (a byte), parent and process group from a ``/proc`` ``stat`` file."""
    with open(path, "rb") as stat:
        text = stat.read()
    # The command name, in parentheses, may itself hold spaces and parentheses.
    state, parent, group = text[text.rindex(b")") + 2:].split(maxsplit=3)[:3]
    return state[0], int(parent), int(group)
