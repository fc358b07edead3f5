"""Names a library bound to a clock or to ``uuid4`` at import follow the case too.

:func:`~harness.intercept.virtual_time` and
:func:`~harness.intercept.seeded_randomness` replace ``time.monotonic``,
``uuid.uuid4`` and the rest in their modules. A library that wrote ``from time
import time`` or ``from uuid import uuid4`` holds the real function in its own
globals, and frameworks are imported once per worker: their run ids and
timestamps (Agno's, written into the agent's database) came from the real clock
and real randomness when the framework was imported before any case, and from
the first case's clock and ids, ever after, when it was imported inside one:
either way, a second run of a case read other times and drew other ids.

While an incarnation runs, :func:`names_follow` rebinds every such name in
a loaded module to the case's function, and binds the real one back after.
Each module is looked at once, when first seen loaded (a module imported during
the case, when the case ends, so the case's function it bound does not outlive
the case): what an incarnation does is set and reset the names found, a few
hundred at most. A module that rebound a name to something else since keeps it.

Left alone: the standard library (``threading``'s and ``queue``'s timeouts wait
on real locks with ``from time import monotonic``; ``time`` and ``uuid``
themselves), the harness, and the test machinery around it (pytest times its
tests, pyfakefs stamps its files). The time functions a case gets dispatch by
thread, so a library's exporter or poller thread still reads and sleeps on the
real clock through the same name; so does the ``uuid4`` put in place here, so
such a thread never draws from the case's seeded ids.

``random``'s module-level functions need nothing: ``from random import uniform``
binds a method of the one generator :func:`random.seed` seeds.
"""

from __future__ import annotations

import itertools
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import ModuleType
from typing import Any, Final

#: Top-level packages whose names are never rebound: see the module docstring.
_LEFT_ALONE: Final = frozenset({
    "harness", "fakes", "reports", "__main__",
    "pytest", "_pytest", "pluggy", "xdist", "execnet", "pyfakefs", "coverage",
    "hypothesis", "_hypothesis_pytestplugin",
}) | sys.stdlib_module_names
#: Modules, by full name, that wait on real locks against a clock they bound: a copy of
#: the standard library's ``queue`` (SQLAlchemy's connection pool waits in it). On the
#: case's clock, which a blocked thread does not move, its timeout would never come.
_LEFT_ALONE_MODULES: Final = frozenset({"sqlalchemy.util.queue"})


class _Names:
    """The modules looked at, and the names found in them, by what they were bound to."""

    def __init__(self) -> None:
        self.seen: set[Any] = set()
        # What a global is compared to: id of a real function or a case's, with its key.
        self.watched: dict[int, str] = {}
        self.found: dict[str, list[tuple[ModuleType, str]]] = {}
        # The last name of sys.modules at the last look, with its module, and their count.
        self.mark: tuple[str | None, object] = (None, None)
        self.count = 0

    def watch(self, key: str, function: Callable[..., Any]) -> None:
        self.watched[id(function)] = key

    def unwatch(self, function: Callable[..., Any]) -> None:
        self.watched.pop(id(function), None)

    def look_at_new_modules(self) -> None:
        """Look at each module loaded since the last look, once.

        ``sys.modules`` keeps its order of insertion: the modules loaded since the
        last look follow the one that was last then (held here, so no other object
        takes its identity). Nothing new, when that one is still last and the count
        the same; all of them walked, when it is gone.
        """
        modules = sys.modules
        name, mark = self.mark
        last = next(reversed(modules), None)
        if last is None or (last == name and len(modules) == self.count
                            and modules.get(last) is mark):
            return
        loaded = list(modules.values())
        start = len(loaded)
        if name is not None and modules.get(name) is mark:
            while start > 0 and loaded[start - 1] is not mark:
                start -= 1
        else:
            start = 0
        candidates = loaded[start:] if start > 0 else loaded
        try:
            fresh = list(itertools.filterfalse(self.seen.__contains__, candidates))
        except TypeError:  # an unhashable stand-in in sys.modules: one at a time
            fresh = [m for m in candidates if _hashable(m) and m not in self.seen]
        self.mark = (last, modules.get(last))
        self.count = len(loaded)
        if start == 0 and len(self.seen) > 2 * len(loaded) + 1000:
            self._forget_unloaded(loaded)
        watched = self.watched
        for module in fresh:
            self.seen.add(module)
            if not isinstance(module, ModuleType) or _left_alone(module):
                continue
            globals_ = vars(module)
            if watched.keys().isdisjoint(map(id, list(globals_.values()))):
                continue
            for attribute, value in list(globals_.items()):
                key = watched.get(id(value))
                if key is not None:
                    self.found.setdefault(key, []).append((module, attribute))

    def _forget_unloaded(self, loaded: list[Any]) -> None:
        live = {id(m) for m in loaded}
        self.seen = {m for m in self.seen if id(m) in live}
        for key, pairs in self.found.items():
            self.found[key] = [p for p in pairs if id(p[0]) in live]


def _hashable(value: object) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _left_alone(module: ModuleType) -> bool:
    name = getattr(module, "__name__", None)
    if not isinstance(name, str):
        return True
    return name.partition(".")[0] in _LEFT_ALONE or name in _LEFT_ALONE_MODULES


_NAMES: Final = _Names()


def _watch_the_real(names: _Names) -> None:
    import time
    import uuid

    for name in ("time", "time_ns", "monotonic", "monotonic_ns", "perf_counter",
                 "perf_counter_ns", "sleep"):
        names.watch(f"time.{name}", getattr(time, name))
    names.watch("uuid.uuid4", uuid.uuid4)


# Taken when the harness is imported, before any case replaced them.
_watch_the_real(_NAMES)
_lock = threading.Lock()


@contextmanager
def names_follow(swaps: Mapping[str, tuple[Callable[..., Any], Callable[..., Any]]]
                 ) -> Iterator[None]:
    """Rebind, for the duration, each name bound to a real function of ``swaps``.

    ``swaps`` maps a key (``"time.monotonic"``, ``"uuid.uuid4"``) to the function
    names bound to it hold now and the case's that replaces it.
    """
    names = _NAMES
    with _lock:
        for key, (_, case) in swaps.items():
            names.watch(key, case)
        names.look_at_new_modules()
        _rebind(names, swaps, back=False)
    try:
        yield
    finally:
        with _lock:
            names.look_at_new_modules()  # imported meanwhile: they bound the case's
            _rebind(names, swaps, back=True)
            for _, case in swaps.values():
                names.unwatch(case)


def _rebind(names: _Names, swaps: Mapping[str, tuple[Callable[..., Any], Callable[..., Any]]],
            *, back: bool) -> None:
    for key, (real, case) in swaps.items():
        old, new = (case, real) if back else (real, case)
        for module, name in names.found.get(key, ()):
            if vars(module).get(name) is old:
                setattr(module, name, new)
