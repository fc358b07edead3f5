"""settle_threads waits for the case's threads to be blocked and quiet, in real time."""

from __future__ import annotations

import threading

import pytest

from fakes import at_work, settle_threads


def _asleep_in_a_thread(*, working: bool) -> tuple[threading.Thread, threading.Event]:
    started, release = threading.Event(), threading.Event()

    def body() -> None:
        if working:
            with at_work():
                started.set()
                release.wait()
        else:
            started.set()
            release.wait()

    thread = threading.Thread(target=body)
    thread.start()
    started.wait()
    return thread, release


def test_a_thread_asleep_on_its_own_is_settled() -> None:
    thread, release = _asleep_in_a_thread(working=False)
    try:
        assert settle_threads([thread], limit=5.0)
    finally:
        release.set()
        thread.join()


def test_a_thread_waiting_on_the_harness_is_never_taken_for_settled() -> None:
    # Asleep on the ledger pipe, waiting for the harness's answer to a tool's effect: on
    # a loaded machine the answer came after the quiet a settled thread shows, the crash
    # went ahead and the effect landed in the next incarnation.
    thread, release = _asleep_in_a_thread(working=True)
    try:
        assert not settle_threads([thread], limit=0.05)  # gave up: still at work
    finally:
        release.set()
        thread.join()
    assert settle_threads([thread])  # ended: nothing to wait for


def test_a_thread_standing_by_for_another_is_not_waited_for() -> None:
    # An event loop waiting for its executor job's turn looks at the job every moment;
    # the job, crashing, settles the case's threads: each waited for the other until the
    # limit (a second per tool call of an OpenAI Agents SDK crash case).
    from fakes import standing_by

    started, release = threading.Event(), threading.Event()

    def looking_again_and_again() -> None:
        with standing_by():
            started.set()
            while not release.wait(0.0001):
                pass

    thread = threading.Thread(target=looking_again_and_again)
    thread.start()
    started.wait()
    try:
        assert settle_threads([thread], limit=0.5)
    finally:
        release.set()
        thread.join()


def test_a_thread_that_keeps_running_is_looked_at_less_and_less_often(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Each look reads /proc twice; a job running on a loaded machine was looked at every
    # half millisecond until it answered: thousands of looks a run, each telling only
    # that it still ran.
    import hashlib

    import fakes._threads as threads

    stop = threading.Event()

    def hashing() -> None:  # runs on a CPU without the GIL: state R throughout
        block = b"x" * (1 << 20)
        while not stop.is_set():
            hashlib.sha256(block).digest()

    looks = 0
    stats = threads._stats

    def counted(ids: list[int]) -> dict[int, tuple[bool, bytes]] | None:
        nonlocal looks
        looks += 1
        return stats(ids)

    monkeypatch.setattr(threads, "_stats", counted)
    thread = threading.Thread(target=hashing)
    thread.start()
    try:
        assert not settle_threads([thread], limit=0.4)  # never blocked: gave up
    finally:
        stop.set()
        thread.join()
    # One look every 4 ms once backed off: about a hundred in 0.4 s (every half
    # millisecond it was some eight hundred).
    assert looks <= 150, looks
