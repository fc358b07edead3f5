"""How the harness starts, and ends, the processes agent code runs in (workers, guests).

Both :mod:`harness.runner._contain` (the case workers) and :mod:`harness.runner._guest`
(importing and checking an agent) start processes the same way, and end what those
started the same way; this module holds both, so neither imports the other.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Collection, Iterator
from typing import Any

# prctl options (linux/prctl.h).
_PR_SET_PDEATHSIG = 1
_PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
# Rounds of killing a process's children: each round's orphans are the next round's children.
_SWEEP_ROUNDS = 64


def process_context() -> Any:
    """The multiprocessing context the harness starts its workers and guests with."""
    # fork starts a worker in milliseconds with everything imported; spawn elsewhere.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


Sweep = Callable[[Collection[int]], int]


@contextlib.contextmanager
def adopting() -> Iterator[Sweep]:
    """While inside, this process (the harness) adopts the orphans of the workers and guests
    it starts (Linux); ``sweep(keep)`` kills and reaps every process it adopted, all its
    children but those it had on entering and ``keep`` (the workers still at work).

    A worker is a subreaper for what its case starts, but a worker that dies (the agent's
    ``os._exit``, a signal) hands its orphans, even one that left the session, on to the
    nearest subreaper above it: this process, not init, so the next sweep ends them.
    Elsewhere (no ``prctl``) it adopts nothing and a sweep finds nothing.

    Inside, this process is also not dumpable: the kernel then lets only a process with
    ``CAP_SYS_PTRACE`` over it read its ``/proc/<pid>/environ``, ``mem`` and the like, and
    agent code in a worker or guest has no such power (an unprivileged user lacks it; a
    root's is left behind in the worker's user namespace, :mod:`harness.runner._seal`).
    So an agent cannot read the harness's environment, its secrets, through its parent.
    """
    libc = _subreaper_libc()
    if libc is None:
        yield lambda _keep: 0
        return
    was = ctypes.c_int(0)
    libc.prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(was))
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1)
    had = frozenset(_children(os.getpid()))

    def sweep(keep: Collection[int]) -> int:
        return _end_children(lambda: [child for child in _children(os.getpid())
                                      if child not in had and child not in keep])

    try:
        with not_dumpable():
            yield sweep
    finally:
        sweep(())
        libc.prctl(_PR_SET_CHILD_SUBREAPER, was.value)


@contextlib.contextmanager
def not_dumpable() -> Iterator[None]:
    """While inside, this process (the harness) is not dumpable (Linux): its ``/proc/<pid>/``
    ``environ`` and ``mem`` open only to a process with ``CAP_SYS_PTRACE`` over it, which
    agent code, in a worker or an ``--exec`` process, lacks (see :func:`adopting`)."""
    libc = _subreaper_libc()
    dumpable = 0 if libc is None else libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0)
    if dumpable > 0:
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    try:
        yield
    finally:
        if dumpable > 0:
            libc.prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0)


def _subreaper_libc() -> Any:
    """libc, where this process can be made a subreaper (Linux); ``None`` elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def die_with_parent(parent: int) -> None:
    """Make this process (a worker, a guest) die with ``parent``, and adopt the orphans of
    its own children, so that nothing of a case outlives the harness."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            # Orphans of the agent's children come to this worker, not to init: the
            # sweep after each case finds them even when they left the session.
            libc.prctl(_PR_SET_CHILD_SUBREAPER, 1)
    if os.getppid() != parent:  # the parent went before the line above took effect
        os._exit(1)


def _children(pid: int) -> list[int]:
    """The children of ``pid`` (Linux ``/proc``; none elsewhere)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as listed:
                found += [int(child) for child in listed.read().split()]
        except OSError:
            continue
    return found


def end_descendants() -> int:
    """Kill every process this one (a worker, a guest) started; how many there were.

    As a subreaper (:func:`die_with_parent`) the process inherits the orphans of the
    children it kills, so a few rounds of "kill and reap the children" reach the whole tree.
    """
    return _end_children(lambda: _children(os.getpid()))


def _end_children(children_now: Callable[[], list[int]]) -> int:
    """Kill and reap ``children_now()``, round after round, until none is left."""
    ended = 0
    for _ in range(_SWEEP_ROUNDS):
        children = children_now()
        if not children:
            break
        for child in children:
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGKILL)
        for child in children:
            with contextlib.suppress(OSError):
                os.waitpid(child, 0)
        ended += len(children)
    return ended


def _descendants(pid: int) -> list[int]:
    """``pid``'s children, theirs, and so on (read before ``pid`` is killed)."""
    found: list[int] = []
    todo = [pid]
    while todo and len(found) < 10_000:
        children = _children(todo.pop())
        found += children
        todo += children
    return found


def kill_tree(pid: int | None) -> None:
    """Kill ``pid`` (a worker, a guest), its process group and every descendant, even one
    that left the group (``setsid``): the tree is read before anything is killed."""
    if pid is None:
        return
    for left in _descendants(pid):
        with contextlib.suppress(OSError):
            os.kill(left, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def resident_mib(pid: int | None) -> int:
    """How many MiB ``pid`` holds in memory now (0 where ``/proc`` cannot say)."""
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE") // 2**20
