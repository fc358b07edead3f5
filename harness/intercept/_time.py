"""The case's clocks follow the world's virtual clock (DESIGN §3, "Virtual time").

While an incarnation runs, :func:`virtual_time` replaces ``time.time``,
``time.monotonic``, ``time.perf_counter`` (and their ``_ns`` forms) and
``time.sleep`` in the :mod:`time` module. ``asyncio`` already runs on the
virtual clock's loop, so ``asyncio.sleep`` and the loop's own time are virtual
too; a blocking ``time.sleep`` moves the clock forward by itself, as the loop
would have waited that long.

Virtual time belongs to the case's own threads: the one that runs the
incarnation, and every thread a thread of the case starts that is not a
daemon (the loop's executor workers, anyio's, the agent's own workers; a pool
made in one case serves the next on its clock). Every other thread (one started before the case,
at a framework's import; a daemon a library starts for itself: a trace
exporter, a poller, a keep-alive) lives on the real clock: its ``time.sleep``
really sleeps, its clocks read real time, and the event loops it makes are
ordinary ones. A poller's ``time.sleep(0.2)`` would otherwise move the case's
clock by however many times it happened to wake, different every run. A
daemon started by a daemon case thread stays the case's: daemon-ness is then
inherited, not chosen.

One kind of daemon is the case's all the same: one a framework starts to do the
case's own work and hand it to the case's loop (:data:`THREADS_AT_THE_CASES_WORK`).
DBOS's ``launch()`` starts a queue thread, whose worker per queue polls the
system database every second, dequeues a workflow (the one ``launch()`` found
pending after a crash, re-enqueued for recovery) and hands it to the loop that
called ``launch()``; the restarted ``main``, calling the workflow under its id,
awaits the result by polling every second on the loop. On the real clock the
loop's polls raced ahead while the thread waited its real second, and the
recovered run landed minutes of virtual time later, a different number every
run. Such a thread, and every thread it starts, works *beside* the loop: its
``time.sleep`` and its ``threading.Event.wait`` with a timeout are timers of the
loop that runs on the case's clock (:meth:`fakes.VirtualClock.park_beside`),
which the clock jumps to in turn with the loop's own, and ``set()`` ends the wait
as ever. When the run ends, the process is over: a wait still pending is never
ended by the clock (a sleep is, without moving it), so the daemon does nothing
more until what it waits for is set (``DBOS.destroy()``, :mod:`._frameworks`).

Why a patch of our own rather than a time-travel package: the case needs one
clock under all of wall time, monotonic time, sleeping and the event loop, and
it moves on every timer the loop jumps to; a package that freezes or shifts
wall time only (time-machine does not touch ``monotonic``, ``perf_counter`` or
``sleep``) would leave the SDKs' retry sleeps and timeouts on the real clock.

Code that bound ``from time import monotonic`` before the case started (a
framework, imported once per worker) has the name rebound for the duration
(:mod:`harness.intercept._bound`); the agent's own modules are imported afresh
inside the case (see :mod:`harness.intercept._plain`), so theirs bind the
virtual functions themselves. ``datetime.now()`` is not patched: ``datetime``
is a built-in type whose methods cannot be replaced, only the class itself.

A blocking ``main`` that runs its own event loop (``asyncio.run``, pydantic-ai's
``run_sync``) gets one driven by the same clock: :func:`virtual_event_loops`
makes every new loop a virtual one.

``time.time()`` starts at :data:`VIRTUAL_EPOCH` (2025-01-01T00:00:00Z), the
same instant the fake provider stamps on its responses, so an HTTP-date in a
``Retry-After`` header means a fixed offset from the start of the case.

>>> from fakes import VirtualClock
>>> import time
>>> clock = VirtualClock()
>>> with virtual_time(clock):
...     time.sleep(90)
...     (time.monotonic(), time.time() - VIRTUAL_EPOCH)
(90.0, 90.0)
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

from fakes import CASE_THREADS, VirtualClock
from harness.intercept._bound import names_follow

#: What ``time.time()`` reads at virtual second 0.
VIRTUAL_EPOCH: Final = 1_735_689_600.0


# The threads of the cases: the thread running an incarnation while it runs, and
# the threads the cases started. One case runs at a time; a thread a case
# started (the loop's executor workers, a framework's pool made on first use)
# serves the later incarnations and cases too, and stays the case's there.
_CASE_THREADS: weakref.WeakSet[threading.Thread] = CASE_THREADS


def in_the_case() -> bool:
    """Whether the calling thread is one of the case's (see the module docstring)."""
    return threading.current_thread() in _CASE_THREADS


@contextmanager
def virtual_time(clock: VirtualClock) -> Iterator[None]:
    """Put the :mod:`time` module on ``clock`` for the duration, for the case's threads."""
    threads = _CASE_THREADS
    here = threading.current_thread()
    joined = here not in threads
    threads.add(here)
    saved = {name: getattr(time, name) for name in _VIRTUAL_NAMES}
    replacements = {name: _for_the_case(threads, virtual, saved[name])
                    for name, virtual in _replacements(clock, saved["sleep"]).items()}
    saved_start = threading.Thread.start
    saved_wait = threading.Event.wait
    try:
        for name, function in replacements.items():
            setattr(time, name, function)
        setattr(threading.Thread, "start", _start_marking(threads, saved_start))  # noqa: B010
        setattr(threading.Event, "wait", _event_wait(clock, saved_wait))  # noqa: B010
        with names_follow({f"time.{name}": (saved[name], function)
                           for name, function in replacements.items()}):
            yield
    finally:
        setattr(threading.Event, "wait", saved_wait)  # noqa: B010
        setattr(threading.Thread, "start", saved_start)  # noqa: B010
        for name, function in saved.items():
            setattr(time, name, function)
        if joined:
            threads.discard(here)


def _for_the_case(threads: weakref.WeakSet[threading.Thread], virtual: Callable[..., Any],
                  real: Callable[..., Any]) -> Callable[..., Any]:
    """``virtual`` for a thread of the case, ``real`` (what was there before) for any other."""
    def either(*args: Any) -> Any:
        if threading.current_thread() in threads:
            return virtual(*args)
        return real(*args)

    functools.update_wrapper(either, real)
    return either


def _start_marking(threads: weakref.WeakSet[threading.Thread],
                   start: Callable[[threading.Thread], None]) -> Callable[[threading.Thread], None]:
    """``Thread.start`` that enrols a thread the case starts, unless it is a chosen daemon."""
    def start_thread(thread: threading.Thread) -> None:
        starter = threading.current_thread()
        if starter in threads:
            if starter in _BESIDE or _at_the_cases_work(thread):
                threads.add(thread)
                _BESIDE.add(thread)
            elif starter.daemon or not thread.daemon:
                threads.add(thread)
        start(thread)

    functools.update_wrapper(start_thread, start)
    return start_thread


#: (module, function): the target of a daemon thread a framework starts to do the case's
#: own work, which the case's loop then waits for (see the module docstring).
THREADS_AT_THE_CASES_WORK: Final = (
    # DBOS's queue thread starts a worker per queue, which dequeues a workflow (one that
    # launch() recovered, among them) and hands it to the loop that called launch().
    ("dbos._queue", "queue_thread"),
)


def _at_the_cases_work(thread: threading.Thread) -> bool:
    target = getattr(thread, "_target", None)
    return (getattr(target, "__module__", None), getattr(target, "__qualname__", None)) \
        in THREADS_AT_THE_CASES_WORK


# The threads of THREADS_AT_THE_CASES_WORK, and every thread they start: the case's, and
# working beside its loop (see the module docstring).
_BESIDE: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


def beside_the_loop() -> bool:
    """Whether the calling thread works beside the case's loop (a framework's daemon at the
    case's work), its timed waits timers of that loop (see the module docstring)."""
    return threading.current_thread() in _BESIDE


def _event_wait(clock: VirtualClock,
                wait: Callable[[threading.Event, float | None], bool]) -> Callable[..., bool]:
    """``Event.wait`` whose timeout, in a thread beside the case's loop, is virtual time."""
    def wait_for_event(event: threading.Event, timeout: float | None = None) -> bool:
        condition = getattr(event, "_cond", None)
        if timeout is None or not beside_the_loop() or not isinstance(
                condition, threading.Condition):
            return wait(event, timeout)
        rang: list[bool] = []  # the timer's: set by the loop

        def wake() -> None:
            with condition:
                rang.append(True)
                condition.notify_all()

        with condition:
            if event.is_set():
                return True
            withdraw = clock.park_beside(max(float(timeout), 0.0), wake)
            if withdraw is not None:
                try:
                    while not event.is_set() and not rang:
                        condition.wait()
                finally:
                    withdraw()
                return event.is_set()
        # No loop runs on the clock (the process is between runs): the wait as it was,
        # outside the condition it takes itself.
        return wait(event, timeout)

    functools.update_wrapper(wait_for_event, wait)
    return wait_for_event


_VIRTUAL_NAMES: Final = ("time", "time_ns", "monotonic", "monotonic_ns", "perf_counter",
                         "perf_counter_ns", "sleep")


def _replacements(clock: VirtualClock,
                  real_sleep: Callable[[float], None]) -> dict[str, Callable[..., Any]]:
    def monotonic() -> float:
        return clock.now()

    def monotonic_ns() -> int:
        return round(clock.now() * 1e9)

    def wall() -> float:
        return VIRTUAL_EPOCH + clock.now()

    def wall_ns() -> int:
        return round(wall() * 1e9)

    def sleep(seconds: float) -> None:
        if seconds < 0:
            raise ValueError("sleep length must be non-negative")
        if beside_the_loop():
            awake = threading.Event()
            if clock.park_beside(float(seconds), awake.set, at_end=True) is None:
                real_sleep(seconds)  # between runs: the process's own idle time
            else:
                awake.wait()
            return
        # A worker thread of the case's loop sleeps beside it; anything else blocks.
        if not clock.sleep_parked(float(seconds)):
            clock.advance(float(seconds))

    return {
        "time": wall, "time_ns": wall_ns, "monotonic": monotonic,
        "monotonic_ns": monotonic_ns, "perf_counter": monotonic,
        "perf_counter_ns": monotonic_ns, "sleep": sleep,
    }


@contextmanager
def virtual_event_loops(clock: VirtualClock) -> Iterator[None]:
    """Make every event loop created meanwhile (``asyncio.run`` …) run on ``clock``."""
    saved = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(_VirtualLoopPolicy(clock))
    try:
        yield
    finally:
        asyncio.set_event_loop_policy(saved)


class _VirtualLoopPolicy(asyncio.DefaultEventLoopPolicy):
    def __init__(self, clock: VirtualClock) -> None:
        super().__init__()
        self._clock = clock

    def new_event_loop(self) -> asyncio.AbstractEventLoop:
        # A thread outside the case (a library's own background loop) keeps real time.
        if in_the_case():
            return self._clock.new_event_loop()
        return super().new_event_loop()


@contextmanager
def threads_the_clock_sees() -> Iterator[None]:
    """Run anyio's worker threads through the loop's executor, which the virtual clock watches.

    The SDKs probe the platform, and pydantic-ai runs a plain tool function, in an
    anyio worker thread. The virtual clock waits for the loop's own executor
    threads before it lets time pass; anyio's threads report back behind its back,
    so without this a slow thread would let the clock jump to the next timer.
    """
    from anyio._backends import _asyncio as backend

    owner = backend.AsyncIOBackend
    saved = owner.__dict__["run_sync_in_worker_thread"]

    async def run_sync_in_worker_thread(
        _cls: type, /, func: Callable[..., Any], args: tuple[Any, ...], **_options: Any,
    ) -> Any:
        context = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, functools.partial(context.run, func, *args))

    setattr(owner, "run_sync_in_worker_thread", classmethod(run_sync_in_worker_thread))  # noqa: B010
    try:
        yield
    finally:
        setattr(owner, "run_sync_in_worker_thread", saved)  # noqa: B010
