"""Real paths in a trace's words, written the same on every machine.

A traceback names each file it went through by its real path: the agent's own
module under the checkout it was run from, a framework under the virtual
environment's ``site-packages``, the standard library wherever this interpreter
was installed. An error's message may name a temporary file. None of that is
what the agent did, yet it would make the trace (and its digest) differ between
two machines, or two checkouts, running the same agent on the same seed.

:func:`portable_paths` rewrites each such path from the folder it lies under
(the longest that matches), line numbers and the rest of the text kept:

==================================================  ====================================
a ``site-packages`` (or ``dist-packages``) folder    ``<site-packages>/openai/_base_client.py``
the interpreter's standard library                  ``<python>/json/decoder.py``
the virtual environment (``sys.prefix``)             ``<venv>/bin/python``
the temporary folder                                ``<tmp>/tmpab12cd34/x.json``
an ``--exec`` agent's working folder (made afresh   ``<agent-folder>/state.json``
for each case, named at random)
the run's starting folder, a ``sys.path`` folder     ``mypackage/agent.py`` (relative)
(the agent's project root)
the home folder                                     ``~/.cache/x``
==================================================  ====================================

>>> roots = PathRoots.of(relative=["/home/me/project"], named={
...     "/home/me/project/.venv/lib/python3.11/site-packages": "<site-packages>",
...     "/usr/lib/python3.11": "<python>"})
>>> print(portable_paths('File "/home/me/project/agent.py", line 9, in main\\n'
...                      'File "/home/me/project/.venv/lib/python3.11/site-packages/'
...                      'openai/_client.py", line 3\\n'
...                      'File "/usr/lib/python3.11/json/decoder.py", line 337', roots))
File "agent.py", line 9, in main
File "<site-packages>/openai/_client.py", line 3
File "<python>/json/decoder.py", line 337
>>> portable_paths("/home/me/projects/other.py and /home/me/project", roots)
'/home/me/projects/other.py and .'
"""

from __future__ import annotations

import functools
import os
import re
import site
import sys
import sysconfig
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

_SITE_FOLDERS = ("site-packages", "dist-packages")
_INTERPRETER = ("<python>", "<site-packages>", "<venv>")


@dataclass(frozen=True)
class PathRoots:
    """The real folders a trace's paths are written from, each with what stands for it."""

    # (real folder, what replaces it: "" for a folder whose paths are written relative)
    folders: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, relative: Iterable[str], named: Mapping[str, str]) -> PathRoots:
        """Roots from folders written relative and folders with a name; never ``/`` itself."""
        chosen = {**dict.fromkeys(relative, ""), **named}
        found: dict[str, str] = {}
        for folder, name in chosen.items():
            # A folder reached through a link is written as its real path too.
            for form in dict.fromkeys((folder, os.path.realpath(folder))):
                trimmed = form.rstrip(os.sep)
                if trimmed and os.path.isabs(trimmed):
                    found.setdefault(trimmed, name)
        return cls(tuple(found.items()))

    def naming(self, named: Mapping[str, str]) -> PathRoots:
        """These roots and ``named`` besides; a folder in both takes its name from ``named``."""
        given = PathRoots.of((), named).folders
        taken = {folder for folder, _ in given}
        return PathRoots((*given, *((f, n) for f, n in self.folders if f not in taken)))

    @functools.cached_property
    def pattern(self) -> re.Pattern[str]:
        """One alternation, the longest folder first: the deepest root a path lies under wins."""
        ordered = sorted((f for f, _ in self.folders), key=len, reverse=True)
        sep = re.escape(os.sep)
        # Not inside a longer name (``/home/me/projects`` is not under ``/home/me/project``),
        # nor the tail of another path (``/var/tmp`` is not ``/tmp``).
        return re.compile(rf"(?<![\w.~{sep}-])({'|'.join(map(re.escape, ordered))})"
                          rf"({sep}|(?![\w.-]))")


def path_roots(agent_folder: str | None = None) -> PathRoots:
    """This process's roots now: its starting folder, ``sys.path``, the interpreter's folders.

    Read outside a case's fake file system (the trace is written after the agent ran).
    Worked out once for each starting folder, ``sys.path``, temporary and home folder: a
    run writes a trace per case. ``agent_folder``: the working folder an agent process ran
    in (``--exec``), written ``<agent-folder>``: it is made with a random name for each
    case, which would make every run's digest differ.
    """
    roots = _roots_for(os.getcwd(), tuple(sys.path), tempfile.gettempdir(),
                       os.path.expanduser("~"))
    return roots if agent_folder is None else roots.naming({agent_folder: "<agent-folder>"})


@functools.lru_cache(maxsize=8)
def _roots_for(start: str, path: tuple[str, ...], temp: str, home: str) -> PathRoots:
    paths = sysconfig.get_paths()
    named: dict[str, str] = {}
    if home not in ("", os.sep, "~"):
        named[home] = "~"
    named[temp] = "<tmp>"
    if sys.prefix != sys.base_prefix:
        named[sys.prefix] = "<venv>"
    for key in ("stdlib", "platstdlib"):
        named[paths[key]] = "<python>"
    sites = [paths["purelib"], paths["platlib"], site.getusersitepackages(),
             *(p for p in path if os.path.basename(p.rstrip(os.sep)) in _SITE_FOLDERS)]
    named.update(dict.fromkeys(sites, "<site-packages>"))
    return PathRoots.of([start, *_project_folders(path, named)], named)


def _project_folders(path: Iterable[str], named: Mapping[str, str]) -> list[str]:
    """The ``sys.path`` folders the agent's own code is imported from.

    Not a folder of the interpreter's (``lib-dynload``, ``site-packages``): those keep
    their names. A project checked out in the home or temporary folder is written
    relative to its own folder, the deeper root.
    """
    special = [folder for folder, name in named.items() if name in _INTERPRETER]
    return [os.path.abspath(p) for p in path
            if p and os.path.isdir(p) and os.path.abspath(p) not in named
            and not any(_within(os.path.abspath(p), folder) for folder in special)]


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def portable_paths(text: str, roots: PathRoots | None = None) -> str:
    """``text`` with every path under one of ``roots`` (default: :func:`path_roots`)
    written from that root, the same on every machine (see the module's table)."""
    roots = roots if roots is not None else path_roots()
    names = dict(roots.folders)
    if not names:
        return text

    def rewrite(match: re.Match[str]) -> str:
        name, sep = names[match.group(1)], match.group(2)
        if name:
            return name + sep
        return "" if sep else "."

    return roots.pattern.sub(rewrite, text)
