import asyncio

import pytest

from fakes import VirtualClock
from harness import VirtualDeadlockError


def test_a_long_sleep_costs_no_wall_time(virtual_clock: VirtualClock,
                                         real_waits: list[float | None]) -> None:
    virtual_clock.run(asyncio.sleep(3600))
    assert virtual_clock.now() == 3600.0
    assert real_waits == []  # the selector never waited: the hour was jumped


def test_timers_fire_in_virtual_order(virtual_clock: VirtualClock) -> None:
    fired: list[tuple[str, float]] = []

    async def after(name: str, seconds: float) -> None:
        await asyncio.sleep(seconds)
        fired.append((name, virtual_clock.now()))

    async def main() -> None:
        await asyncio.gather(after("late", 30), after("early", 5), after("middle", 10))

    virtual_clock.run(main())
    assert fired == [("early", 5.0), ("middle", 10.0), ("late", 30.0)]


def test_timeout_fires_on_virtual_time(virtual_clock: VirtualClock) -> None:
    async def stalled() -> None:
        async with asyncio.timeout(30):
            await asyncio.Event().wait()

    with pytest.raises(TimeoutError):
        virtual_clock.run(stalled())
    assert virtual_clock.now() == 30.0


def test_time_carries_across_runs_like_the_world_clock() -> None:
    clock = VirtualClock(start=100.0)
    clock.run(asyncio.sleep(5))
    clock.run(asyncio.sleep(5))
    assert clock.now() == 110.0


def test_waiting_forever_is_reported_as_a_deadlock(virtual_clock: VirtualClock) -> None:
    async def forever() -> None:
        await asyncio.Event().wait()

    with pytest.raises(VirtualDeadlockError, match=r"^virtual deadlock at t=0\.000s"):
        virtual_clock.run(forever())


def test_advance_refuses_to_go_backwards(virtual_clock: VirtualClock) -> None:
    with pytest.raises(ValueError, match="backwards"):
        virtual_clock.advance(-1)


def test_a_worker_thread_is_waited_for_not_taken_for_a_deadlock(
    virtual_clock: VirtualClock,
) -> None:
    async def ask_a_thread() -> str:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, lambda: "from a thread")

    assert virtual_clock.run(ask_a_thread()) == "from a thread"
    assert virtual_clock.now() == 0.0


def test_a_slow_worker_thread_lets_no_virtual_time_pass() -> None:
    # An SDK probes the platform in a thread before its first request; on a loaded
    # machine that takes long in wall time, and a pending timer must not fire meanwhile.
    import threading

    clock = VirtualClock()
    release = threading.Event()

    def slow_probe() -> float:
        release.wait(timeout=5)  # held until the timer below would long have fired
        return clock.now()

    async def main() -> tuple[float, bool]:
        loop = asyncio.get_running_loop()
        timer = asyncio.ensure_future(asyncio.sleep(1))
        threading.Timer(0.05, release.set).start()
        seen = await loop.run_in_executor(None, slow_probe)
        return seen, timer.done()

    assert clock.run(main()) == (0.0, False)


def test_a_runner_leaves_nothing_of_one_coroutine_to_the_next() -> None:
    import warnings

    clock = VirtualClock()
    fired: list[str] = []

    async def leaves_a_timer() -> None:
        asyncio.get_running_loop().call_later(5, fired.append, "late timer")

    async def counts() -> list[int]:
        async def numbers():  # an async generator on the reused loop
            yield 1
            yield 2

        await clock.sleep(10)
        return [n async for n in numbers()]

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with clock.runner() as runner:
            runner.run(leaves_a_timer())
            assert runner.run(counts()) == [1, 2]
    assert fired == []
    assert clock.now() == 10


def test_a_quick_child_process_exits_before_virtual_time_moves_on() -> None:
    # 50 ms of real time is far beyond the grace for other real I/O: before child
    # processes had a grace of their own, the clock jumped to the timeout meanwhile,
    # and a quick command "timed out" on a slow or busy machine only.
    from fakes._tools import run_in_process_group

    clock = VirtualClock()

    async def quick_command_under_a_timeout() -> int:
        return await asyncio.wait_for(run_in_process_group(("sleep", "0.05")), timeout=1)

    assert clock.run(quick_command_under_a_timeout()) == 0
    assert clock.now() == 0.0


def test_a_long_child_process_meets_its_timeout_in_virtual_time() -> None:
    from fakes._tools import run_in_process_group

    clock = VirtualClock()

    async def long_command_under_a_timeout() -> str:
        try:
            await asyncio.wait_for(run_in_process_group(("sleep", "30")), timeout=1)
        except TimeoutError:
            return "timed out"
        return "finished"

    assert clock.run(long_command_under_a_timeout()) == "timed out"
    assert clock.now() == 1.0


# Children that block in one stretch for less than the quiet time (a short sleep, or
# several in turn) finish under their timeout, and one that blocks for good meets it;
# so does a child that runs on the CPU for longer than the quiet time finish.
BLOCKING = {
    ("sleep", "0.05"): (0, 0.0),
    ("sh", "-c", "sleep 0.1; sleep 0.1; sleep 0.1"): (0, 0.0),
    ("sleep", "30"): ("timed out", 1.0),
}
BUSY = {("sh", "-c", "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done"): (0, 0.0)}


def outcomes(children: dict[tuple[str, ...], object]
             ) -> dict[tuple[str, ...], tuple[object, float]]:
    from fakes._tools import run_in_process_group

    async def under_a_timeout(argv: tuple[str, ...]) -> object:
        try:
            return await asyncio.wait_for(run_in_process_group(argv), timeout=1)
        except TimeoutError:
            return "timed out"

    seen = {}
    for argv in children:
        clock = VirtualClock()
        seen[argv] = (clock.run(under_a_timeout(argv)), clock.now())
    return seen


@pytest.mark.system  # system tier: real child processes
def test_a_child_process_meets_its_timeout_only_if_it_blocks_longer_than_the_quiet_time() -> None:
    assert outcomes({**BLOCKING, **BUSY}) == {**BLOCKING, **BUSY}


@pytest.mark.system  # system tier: real child processes on a loaded machine
def test_a_loaded_machine_gives_child_processes_the_same_outcomes() -> None:
    """Processes burning every CPU slow the children's running parts down, never
    their blocked ones, and a child busy on the CPU is given its grace in CPU time,
    which the load stretches in real time but never shortens: the same timers fire."""
    import os
    import subprocess
    import sys

    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
               for _ in range(os.cpu_count() or 2)]
    try:
        assert outcomes({**BLOCKING, **BUSY}) == {**BLOCKING, **BUSY}
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


def test_a_busy_childs_grace_is_its_run_time_not_the_real_time_a_load_stretches() -> None:
    from fakes._clock import _PROCESS_REAL_LIMIT_SECONDS, _RunTime, _VirtualSelector

    ran = _RunTime()
    ran.add({101: 5_000_000_000, 102: 0})    # at the first look: 5 s run before the wait
    ran.add({101: 5_400_000_000, 103: 300_000_000})   # 0.4 s more; a new thread ran 0.3 s
    ran.add({101: 5_500_000_000})            # thread 103 ended: what it ran still counts
    assert ran.seconds == pytest.approx(0.8)

    # Ten real seconds on a loaded machine, 0.8 s of them on a CPU: the grace goes on.
    assert not _VirtualSelector._grace_over(10.0, ran.seconds)
    assert _VirtualSelector._grace_over(10.0, 2.5)
    assert _VirtualSelector._grace_over(_PROCESS_REAL_LIMIT_SECONDS, 0.0)  # stuck: in the end
    assert _VirtualSelector._grace_over(2.5, None)  # nothing seen: real time


def test_a_child_blocked_for_good_is_overtaken_long_before_the_grace_is_over(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from fakes._tools import run_in_process_group

    # With a grace longer than the child's 30 s, only the quiet rule can let virtual
    # time reach the timeout: waited out, the child would exit first and no timeout
    # would fire. No wall clock is read, so a loaded machine cannot change the result.
    monkeypatch.setattr("fakes._clock._PROCESS_GRACE_SECONDS", 3600.0)

    async def long_command_under_a_timeout() -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(run_in_process_group(("sleep", "30")), timeout=1)

    VirtualClock().run(long_command_under_a_timeout())
