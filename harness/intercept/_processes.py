"""No process escapes a case: the agent's code cannot start one, whatever it calls.

A child process runs outside everything the harness intercepts: it reads and
writes the real disk (pyfakefs lives in this process only), opens real sockets,
runs on the real clock, and a simulated crash does not kill it. So while an
agent's incarnation runs, every way Python has to start one is refused:
``subprocess`` (``Popen``, ``run``, ``call``, ``check_output``, ``getoutput``...,
and so ``asyncio.create_subprocess_*`` and ``multiprocessing``'s spawn),
``os.system``, ``os.popen``, ``os.fork``, ``os.forkpty``, ``os.exec*``,
``os.spawn*`` and ``os.posix_spawn``/``posix_spawnp``.

The refusal is a :class:`ProcessRefused`, a :class:`fakes.HarnessLimitExceeded`:
like a crash it is no ``Exception``, so an agent's ``except Exception`` does not
swallow it, and the case fails with a ``harness_limit`` verdict naming the call.
An agent that catches it anyway gains nothing: the refusal is raised again when
the incarnation ends.

The standard library's questions to the system (``platform``, ``uuid``) run a
fixed read-only command and are let through. The world's own processes are not
the agent's: a scenario tool of kind ``subprocess`` is started by the harness's
code (``fakes``), in its own process group, ended on cancel and with the case; a
call whose nearest caller outside the standard library is the harness's own code
goes through. That tool kind is
also the way to give an agent a command it needs: there is no switch to let the
agent start one itself, because no child can be kept inside the world.

Native code (a C extension, ``ctypes``) can still call ``fork`` or ``system``
below Python; :mod:`harness.runner._contain` ends whatever such a child left
behind when the case ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, Final

from fakes import HarnessLimitExceeded
from harness.intercept._network import Patched, patch_attribute, restore
from harness.intercept._telemetry import calling_library

#: The harness's own packages: a process they start is the world's (a subprocess tool).
_WORLD_PACKAGES: Final = frozenset({"harness", "fakes"})
#: Modules that ask the system about itself with a fixed command (``platform.platform()``
#: runs ``uname -p``, which the OpenAI SDK calls for its headers; ``uuid`` may run
#: ``ip link``; ``distro``, the OS lookup of the OpenAI SDK and of Haystack's telemetry,
#: runs ``lsb_release -a`` and ``uname -rs``): read-only, and let through.
_SYSTEM_QUERIES: Final = frozenset({"platform", "uuid", "distro.distro"})
_PLUMBING: Final = frozenset(sys.stdlib_module_names) | {"pyfakefs"}
_OS_CALLS: Final = (
    "system", "popen", "fork", "forkpty",
    "execv", "execve", "execl", "execle", "execlp", "execlpe", "execvp", "execvpe",
    "spawnv", "spawnve", "spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnvp", "spawnvpe",
    "posix_spawn", "posix_spawnp",
)
_SHOWN_CHARS: Final = 200
#: What the verdict advises (see harness.runner._run's advice by limit).
PROCESS_ADVICE: Final = (
    "run the command as a scenario tool (kind: subprocess, with its argv): the world starts "
    "it, crashes and ends it with the case; or replace the function that runs it with a "
    "tool target")


class ProcessRefused(HarnessLimitExceeded):
    """The agent's code tried to start a process inside a case (see the module docstring)."""

    def __init__(self, call: str) -> None:
        self.call = call
        super().__init__("process", f"the agent started a process ({call}): a process "
                         "outside the world cannot be crashed, timed or seen (it would "
                         "reach the real disk and network, on the real clock)")


@contextmanager
def no_processes() -> Iterator[None]:
    """Refuse every process the agent's code starts while this runs (module docstring)."""
    refused: list[ProcessRefused] = []
    saved: Patched = []
    try:
        saved += patch_attribute(subprocess.Popen, "__init__", _guarded_popen(refused))
        for name in _OS_CALLS:
            original = getattr(os, name, None)
            if original is not None:
                saved += patch_attribute(os, name, _guarded(f"os.{name}", original, refused))
        try:
            yield
        except BaseException as error:
            if refused and error is not refused[0]:
                # Caught, then the run ended otherwise (a crash, another error): the
                # refusal is still what decides the case.
                raise refused[0] from error
            raise
    finally:
        restore(saved)
    if refused:  # caught by the agent and ignored: the case fails all the same
        raise refused[0]


def _guarded_popen(refused: list[ProcessRefused]) -> Callable[..., Any]:
    # Refused at the door, before Popen makes its pipes (fake ones under the agent's files).
    original = subprocess.Popen.__init__

    def __init__(self: subprocess.Popen[Any], args: Any, *rest: Any, **kw: Any) -> None:
        caller = sys._getframe(1)
        if _from_the_world(caller):
            original(self, args, *rest, **kw)
            return
        shown = list(args) if isinstance(args, list | tuple) else args
        raise _refusal(f"subprocess.Popen {_short(shown)}", caller, refused)

    return __init__


def _guarded(name: str, original: Callable[..., Any], refused: list[ProcessRefused]
             ) -> Callable[..., Any]:
    def guarded(*args: Any, **kwargs: Any) -> Any:
        caller = sys._getframe(1)
        if _from_the_world(caller):
            return original(*args, **kwargs)
        shown = ", ".join(_short(a) for a in args)
        raise _refusal(f"{name}({shown})", caller, refused)

    guarded.__name__ = original.__name__
    return guarded


def _refusal(call: str, caller: FrameType, refused: list[ProcessRefused]) -> ProcessRefused:
    library = calling_library(caller)
    error = ProcessRefused(f"{call} by {library}" if library != "unknown" else call)
    refused.append(error)
    return error


def _from_the_world(frame: FrameType | None) -> bool:
    """Whether the nearest caller outside the standard library is the harness's own code,
    or the call is one of the standard library's own queries of the system."""
    while frame is not None:
        module = str(frame.f_globals.get("__name__") or "")
        if module in _SYSTEM_QUERIES:
            return True
        top = module.partition(".")[0]
        if top and top not in _PLUMBING:
            return top in _WORLD_PACKAGES and module != __name__
        frame = frame.f_back
    return False


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "…"
