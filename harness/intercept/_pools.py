"""A case's thread pools run each task when it is submitted, so the case runs one way.

A framework that hands work to a :class:`concurrent.futures.ThreadPoolExecutor`
runs it beside the thread that submitted it, and the operating system decides
which of the two reaches the disk first. LangGraph saves each checkpoint in the
background by default while the graph's next step (a model call, a tool call)
goes on: which commit is the fifth, and so what a crash at ``sqlite:commit#5``
leaves behind, changed from run to run, and so did the verdict (the same case
passed once in six runs and failed with two different digests the other five).
A harness whose job is to say what a crash at a given point does needs that
point to mean one thing.

So, while an incarnation runs, a pool's ``submit`` from one of the case's
threads runs the task to its end there and then, in a context of its own (a
worker thread starts with an empty one), and returns its finished future. That
is one of the schedules the real pool could have taken, the one where the
worker started at once and the submitter waited its turn, and it is the same
every run. A submission from a thread that runs an event loop is left to the
pool (``run_in_executor`` and ``asyncio.to_thread`` are there so that a blocking
call does not stop the loop: a task of theirs may wait for the loop), as is
every submission from outside the case; the case's loop then waits for the job's
turn (:func:`executor_jobs_in_turn`): until the job has answered, handed the loop
something, gone to sleep in virtual time or blocked.

What it cannot make one way: threads the agent starts itself
(``threading.Thread``), which still run beside it; a task that waits for
something its submitter does only after submitting it would wait for ever, and
the case ends at its limits, naming where it waited.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from fakes import SimulatedCrash, VirtualClock
from harness._errors import HarnessError
from harness.intercept._time import in_the_case


@contextmanager
def pools_run_in_turn() -> Iterator[None]:
    """Make ``ThreadPoolExecutor.submit`` from the case's threads run the task at once."""
    pool = concurrent.futures.ThreadPoolExecutor
    saved = pool.__dict__["submit"]

    @functools.wraps(saved)
    def submit(self: concurrent.futures.ThreadPoolExecutor, fn: Callable[..., Any], /,
               *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        if not in_the_case() or _loop_running():
            return saved(self, fn, *args, **kwargs)  # type: ignore[no-any-return]
        return _ran_now(self, fn, args, kwargs)

    setattr(pool, "submit", submit)  # noqa: B010 - a class attribute, swapped and restored
    try:
        yield
    finally:
        setattr(pool, "submit", saved)  # noqa: B010


@contextmanager
def executor_jobs_in_turn(clock: VirtualClock) -> Iterator[None]:
    """The event loops ``clock`` drives wait for each ``run_in_executor`` job's turn.

    LangGraph runs a plain tool function in the loop's executor while the loop saves
    the last step's checkpoint: which of the two reached the world first (the mail, the
    commit) was the operating system's choice, so a crash at one commit left a
    different state, and another verdict, from run to run on a loaded machine.
    """
    saved = clock.jobs_in_turn
    clock.jobs_in_turn = True
    try:
        yield
    finally:
        clock.jobs_in_turn = saved


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _ran_now(pool: concurrent.futures.ThreadPoolExecutor, fn: Callable[..., Any],
             args: tuple[Any, ...], kwargs: dict[str, Any]) -> concurrent.futures.Future[Any]:
    """``fn`` run to its end, as the finished future the pool would have handed back."""
    # The pool's own refusal, with its words: a task after shutdown is an error.
    if getattr(pool, "_shutdown", False):
        raise RuntimeError("cannot schedule new futures after shutdown")
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    future.set_running_or_notify_cancel()
    try:
        result = contextvars.Context().run(fn, *args, **kwargs)
    except (SimulatedCrash, HarnessError):
        raise  # the process dies here, or the harness's own guard: no future outlives it
    except BaseException as error:  # the future carries it, as a worker's would
        future.set_exception(error)
    else:
        future.set_result(result)
    return future
