"""Virtual time belongs to the case: threads it did not start live on the real clock."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from fakes import VirtualClock
from harness.intercept import PlainEntry, virtual_time
from harness.intercept._time import virtual_event_loops
from harness.runner import Case
from harness.runner._determinism import run_case_twice

from .conftest import TOOLS
from .test_plain_agent import mail_scenario


class Poller:
    """A background thread polling with ``time.sleep``, as a trace exporter does."""

    def __init__(self, seconds: float = 0.01, *, daemon: bool = True) -> None:
        self.seconds = seconds
        self.polled = threading.Event()
        self.stopped = threading.Event()
        self.readings: list[float] = []
        self.thread = threading.Thread(target=self._poll, daemon=daemon)

    def _poll(self) -> None:
        while not self.stopped.is_set():
            time.sleep(self.seconds)
            self.readings.append(time.monotonic())
            self.polled.set()

    def start(self) -> Poller:
        self.thread.start()
        return self

    def wait_for_polls(self, count: int) -> None:
        """Let ``count`` polls happen (in real time) before going on."""
        for _ in range(count):
            self.polled.clear()
            assert self.polled.wait(timeout=10), "the poller stopped polling"

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=10)


@pytest.fixture
def poller() -> Iterator[Poller]:
    started = Poller().start()
    yield started
    started.stop()


def test_a_thread_started_before_the_case_neither_moves_nor_reads_its_clock(
        poller: Poller) -> None:
    clock, real_before = VirtualClock(), time.monotonic()
    with virtual_time(clock):
        poller.wait_for_polls(5)
        readings = poller.readings[-5:]
    assert clock.now() == 0.0
    assert min(readings) >= real_before  # the real monotonic clock, not the case's


def test_a_daemon_a_library_starts_inside_the_case_lives_on_the_real_clock() -> None:
    clock = VirtualClock()
    with virtual_time(clock):
        exporter = Poller(0.01, daemon=True).start()  # started lazily, on the first trace
        try:
            exporter.wait_for_polls(5)
        finally:
            exporter.stop()
    assert clock.now() == 0.0


def test_a_worker_thread_the_case_starts_moves_its_clock() -> None:
    clock = VirtualClock()

    def work() -> None:
        time.sleep(30)
        inner = threading.Thread(target=time.sleep, args=(12,))  # and one it starts
        inner.start()
        inner.join()

    with virtual_time(clock):
        worker = threading.Thread(target=work)
        worker.start()
        worker.join()
        seen = time.monotonic()
    assert (clock.now(), seen) == (42.0, 42.0)


def test_the_loops_executor_threads_stay_the_cases_in_the_next_incarnation() -> None:
    clock = VirtualClock()

    async def sleep_in_a_worker(seconds: float) -> None:
        await asyncio.get_running_loop().run_in_executor(None, time.sleep, seconds)

    with clock.runner() as runner:
        with virtual_time(clock):
            runner.run(sleep_in_a_worker(5))
        with virtual_time(clock):  # the same executor thread, a new incarnation
            runner.run(sleep_in_a_worker(7))
    assert clock.now() == 12.0


def test_a_worker_threads_sleep_runs_beside_the_loop_whose_timers_fire_meanwhile() -> None:
    # Before, the thread moved the clock 20 s at once: a timer due at 5 s fired at 20 s.
    clock = VirtualClock()
    fired: list[float] = []

    async def wait_in_a_thread_with_a_timer_at_5() -> float:
        asyncio.get_running_loop().call_later(5, lambda: fired.append(clock.now()))
        await asyncio.to_thread(time.sleep, 20)
        return clock.now()

    with clock.runner() as runner, virtual_time(clock):
        assert runner.run(wait_in_a_thread_with_a_timer_at_5()) == 20.0
    assert fired == [5.0]
    assert clock.held == []  # the run waited for its thread: nothing held it after


def test_a_run_cancelled_during_a_worker_threads_sleep_is_held_until_the_thread_wakes() -> None:
    # The task stops at the cancel, as in real time; the process cannot exit before the
    # thread's sleep is over (asyncio.run waits for its executor), and the clock says so.
    clock = VirtualClock()

    async def cancelled_at_5() -> float:
        waiting = asyncio.ensure_future(asyncio.to_thread(time.sleep, 20))
        asyncio.get_running_loop().call_later(5, waiting.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await waiting
        return clock.now()

    with clock.runner() as runner, virtual_time(clock):
        assert runner.run(cancelled_at_5()) == 5.0
    assert (clock.held, clock.now()) == ([(5.0, 20.0)], 20.0)


def test_two_worker_threads_sleep_side_by_side_not_one_after_the_other() -> None:
    clock = VirtualClock()

    async def both() -> float:
        await asyncio.gather(asyncio.to_thread(time.sleep, 3), asyncio.to_thread(time.sleep, 8))
        return clock.now()

    with clock.runner() as runner, virtual_time(clock):
        assert runner.run(both()) == 8.0


def test_a_pool_one_case_made_serves_the_next_case_on_its_clock() -> None:
    # A framework's pool made on first use: its threads are the cases', not a stranger's.
    first, second = VirtualClock(), VirtualClock()
    with ThreadPoolExecutor(max_workers=1) as pool:
        with virtual_time(first):
            pool.submit(time.sleep, 2).result()
        with virtual_time(second):
            pool.submit(time.sleep, 3).result()
    assert (first.now(), second.now()) == (2.0, 3.0)


def test_a_loop_a_foreign_thread_makes_during_the_case_keeps_real_time() -> None:
    clock, go, results = VirtualClock(), threading.Event(), []

    def background_loop() -> None:
        assert go.wait(timeout=10)
        results.append(asyncio.run(_loop_time_after(0.05)))

    outsider = threading.Thread(target=background_loop, daemon=True)
    outsider.start()
    real_before = time.monotonic()
    with virtual_time(clock), virtual_event_loops(clock):
        go.set()
        outsider.join(timeout=10)
    assert clock.now() == 0.0
    assert len(results) == 1
    assert results[0] >= real_before


async def _loop_time_after(seconds: float) -> float:
    await asyncio.sleep(seconds)
    return asyncio.get_running_loop().time()


EXPORTER = TOOLS + '''

import threading
import time


def _export() -> None:
    # A tracing SDK's exporter: a daemon polling its queue every 10 ms.
    for _ in range(300):
        time.sleep(0.01)
        time.time()


threading.Thread(target=_export, daemon=True).start()
'''


def test_a_polling_exporter_leaves_the_case_deterministic_and_its_time_at_zero(
        openai_agent: Callable[..., str], poller: Poller) -> None:
    package = openai_agent(tools=EXPORTER)
    scenario = mail_scenario(package)
    case = Case(scenario.name, Path("scenarios/mail.yaml"), scenario.seed, None,
                agent=f"{package}.agent:main")
    result = run_case_twice(case, scenario, PlainEntry(f"{package}.agent:main"))
    statuses = {v.invariant: v.status for v in result.verdicts}
    assert statuses["determinism"] == "pass", result.verdicts
    assert result.status == "pass", result.failed_verdicts
    assert result.virtual_seconds == 0.0


# ------------------------------------- a framework's daemon that does the case's own work

@contextlib.contextmanager
def _queue_thread_of_a_framework(
        work: Callable[[threading.Event], None]) -> Iterator[threading.Thread]:
    """A daemon thread whose target is named as DBOS's queue thread (``dbos._queue``), the
    daemon DBOS's launch() starts to hand the launching loop its queued workflows; told to
    stop on leaving, as DBOS.destroy() tells it."""
    def queue_thread(stop: threading.Event) -> None:
        work(stop)

    queue_thread.__module__, queue_thread.__qualname__ = "dbos._queue", "queue_thread"
    stop = threading.Event()
    thread = threading.Thread(target=queue_thread, args=(stop,), daemon=True)
    try:
        yield thread
    finally:
        stop.set()
        if thread.is_alive():
            thread.join(timeout=10)


def test_a_frameworks_queue_thread_hands_the_loop_its_work_on_the_cases_clock() -> None:
    # DBOS recovers a workflow by enqueueing it; its queue thread polls every second and
    # hands it to the loop, which meanwhile awaits the result by polling too. On the real
    # clock the loop's polls raced ahead while the thread waited its second: the re-sent
    # mail landed at 176 virtual seconds, a different number every run.
    clock = VirtualClock()
    handed: list[float] = []
    polls: list[float] = []
    done: list[asyncio.Future[float]] = []

    def hand_over() -> None:
        if not done[0].done():
            done[0].set_result(clock.now())

    def poll(stop: threading.Event) -> None:
        while not stop.wait(timeout=1.0):  # DBOS's queue worker's poll
            handed.append(time.monotonic())
            done[0].get_loop().call_soon_threadsafe(hand_over)
            inner = threading.Thread(target=time.sleep, args=(0.5,), daemon=True)
            inner.start()  # a daemon it starts is the case's too: its sleep is virtual
            inner.join()

    async def await_the_recovered_workflow(queue: threading.Thread) -> float:
        done.append(asyncio.get_running_loop().create_future())
        queue.start()
        while not done[0].done():
            polls.append(clock.now())
            await asyncio.sleep(0.3)  # DBOS's await of a workflow's result
        return done[0].result()

    with clock.runner() as runner, virtual_time(clock), \
            _queue_thread_of_a_framework(poll) as queue:
        assert runner.run(await_the_recovered_workflow(queue)) == 1.0
        assert polls == [0.0, 0.3, 0.6, 0.8999999999999999]
        assert clock.now() == 1.2
        assert handed == [1.0]  # the run is over: its daemon threads run no more


def test_a_frameworks_queue_thread_stops_when_told_though_the_run_is_over() -> None:
    clock = VirtualClock()
    polled = threading.Event()

    def poll(stop: threading.Event) -> None:
        while not stop.wait(timeout=1.0):
            polled.set()

    async def launch_and_return(queue: threading.Thread) -> None:
        queue.start()
        await asyncio.sleep(0.5)

    with clock.runner() as runner, virtual_time(clock):
        with _queue_thread_of_a_framework(poll) as queue:
            runner.run(launch_and_return(queue))
            assert clock.now() == 0.5
        assert not queue.is_alive()  # stopped at once: DBOS.destroy() at the process's end
    assert not polled.is_set()


def test_a_frameworks_queue_thread_waits_as_ever_between_runs() -> None:
    # No loop runs on the clock: nothing would end a virtual wait, so the wait is real.
    clock = VirtualClock()
    waited: list[bool] = []

    def poll(stop: threading.Event) -> None:
        waited.append(stop.wait(timeout=0.01))
        waited.append(threading.Event().wait(timeout=0.01))
        time.sleep(0.01)

    with virtual_time(clock), _queue_thread_of_a_framework(poll) as queue:
        queue.start()
        queue.join(timeout=10)
    assert waited == [False, False]
    assert clock.now() == 0.0
