"""The journal of a run in progress: every finished case on disk the moment it finishes.

``harness run --out DIR`` keeps ``DIR/journal.jsonl`` while it runs. Its first line
(written whole: a temporary file renamed into place) names the plan: the harness
version, the options that shape results, each scenario file with its SHA-256 and
every case id in the planned order, and the command that resumes the run. Each
later line is one finished case, appended and ``fsync``'d before the next case is
counted::

    {"journal": 1, "plan": {...}, "resume": "harness run scenarios --resume"}
    {"index": 2, "case_id": "mail[journal:fsync#1:after:unsynced_lost]", "case": {...}, ...}

Cases are appended as they finish (with ``--jobs`` not in the planned order); the
``index`` puts them back. When every case is in, the result files and
``manifest.json`` are written from the journal and the journal is removed: while it
is there, the folder holds a run that :func:`unfinished_run` reports as incomplete
(unless the manifest beside it is whole: the run was done but for the removal).
A line cut short by a kill is not a case; reading stops before it and a resumed run
writes over it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from harness._errors import ConfigError

JOURNAL_NAME = "journal.jsonl"
#: Bumped when a line changes meaning; a journal of another version is not resumed.
JOURNAL_VERSION = 1


@dataclass(frozen=True)
class JournalRead:
    """A journal as found on disk: its header, its whole case lines by index, and the
    length in bytes of the part that is whole (what a resumed run keeps)."""

    path: Path
    header: Mapping[str, Any]
    entries: Mapping[int, Mapping[str, Any]]
    whole_bytes: int

    @property
    def total(self) -> int:
        cases = self.header.get("plan", {}).get("cases", [])
        return len(cases) if isinstance(cases, list) else 0

    @property
    def resume(self) -> str:
        return str(self.header.get("resume", "harness run ... --resume"))


@dataclass(frozen=True)
class Unfinished:
    """A results folder whose run stopped before it wrote its files."""

    folder: Path
    done: int
    total: int
    resume: str

    @property
    def message(self) -> str:
        return (f"this run is incomplete: {self.done} of {self.total} cases; "
                f"resume it with: {self.resume}")


def read_journal(path: Path) -> JournalRead | None:
    """The journal at ``path``; None when there is none or its header is not one."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    lines = data.split(b"\n")
    header = _object(lines[0]) if len(lines) > 1 else None
    if header is None or header.get("journal") != JOURNAL_VERSION:
        return None
    whole = len(lines[0]) + 1
    entries: dict[int, Mapping[str, Any]] = {}
    # The last piece has no newline: empty, or a line a kill cut short.
    for line in lines[1:-1]:
        entry = _object(line)
        if entry is None or not isinstance(entry.get("index"), int):
            break  # nothing after a damaged line is trusted
        entries[entry["index"]] = entry
        whole += len(line) + 1
    return JournalRead(path, header, entries, whole)


def unfinished_run(folder: Path) -> Unfinished | None:
    """What ``folder``'s journal says of a run that did not finish; None without one."""
    found = read_journal(Path(folder) / JOURNAL_NAME)
    if found is None:
        if (Path(folder) / JOURNAL_NAME).exists():
            return Unfinished(Path(folder), 0, 0, "harness run ... --resume (its journal's "
                                                  "first line is damaged: run it again)")
        return None
    return Unfinished(Path(folder), len(found.entries), found.total, found.resume)


def _object(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def entry_line(entry: Mapping[str, Any]) -> bytes:
    """One journal line: compact JSON, as the result files write their rows."""
    return (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")


class JournalFile:
    """The open journal of a run: :meth:`append` makes one case durable."""

    def __init__(self, handle: IO[bytes]) -> None:
        self._handle = handle

    @classmethod
    def create(cls, path: Path, header: Mapping[str, Any]) -> JournalFile:
        """A new journal holding only ``header``; it replaces any journal there, whole."""
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            with tmp.open("wb") as out:
                out.write(entry_line(header))
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        sync_folder(path.parent)
        return cls(path.open("ab"))

    @classmethod
    def reopen(cls, found: JournalRead) -> JournalFile:
        """``found`` opened for more cases, a line a kill cut short dropped first."""
        try:
            handle = found.path.open("r+b")
        except OSError as error:
            raise ConfigError("--resume", str(found.path.parent), "a folder the harness can "
                              f"write to (cannot open {found.path.name}: {error.strerror})",
                              "Fix its permissions") from error
        handle.truncate(found.whole_bytes)
        handle.seek(found.whole_bytes)
        return cls(handle)

    def append(self, line: bytes) -> None:
        """Write one :func:`entry_line` and sync it: the case is on disk when this returns."""
        self._handle.write(line)
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()


def sync_folder(folder: Path) -> None:
    """Make the names in ``folder`` (a rename, a new file) survive a power loss too."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # a folder that cannot be opened (some platforms): the rename still stands
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# The option behind each key of a plan's "options", for a message about a difference.
_OPTION_NAMES = {
    "seed": "--seed", "crash": "--crash / --crash-at / --no-crash", "agent": "--agent",
    "targets": "--target", "absorb": "--absorb", "dialect": "--dialect", "strict": "--strict",
    "check_determinism": "--check-determinism", "replay": "--replay", "exec": "--exec",
    "time_scale": "--time-scale", "shard": "--shard",
}


def plan_differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What makes plan ``new`` another run than ``old``, one phrase each; empty: the same.

    >>> plan_differences({"options": {"seed": 1}}, {"options": {"seed": 2}})
    ['--seed was 1, now 2']
    """
    found = []
    if old.get("harness_version") != new.get("harness_version"):
        found.append(f"the harness was version {old.get('harness_version')}, now "
                     f"{new.get('harness_version')}")
    before, now = old.get("options") or {}, new.get("options") or {}
    for key in sorted(set(before) | set(now)):
        if before.get(key) != now.get(key):
            found.append(f"{_OPTION_NAMES.get(key, key)} was {_shown(before.get(key))}, "
                         f"now {_shown(now.get(key))}")
    # A changed --seed changes every file's seed: said once, above.
    seeds = before.get("seed") == now.get("seed")
    found += _scenario_differences(old.get("scenarios") or [], new.get("scenarios") or [],
                                   seeds=seeds)
    if not found and old.get("cases") != new.get("cases"):
        found.append(f"the planned cases differ ({len(old.get('cases') or [])} then, "
                     f"{len(new.get('cases') or [])} now)")
    return found


def _scenario_differences(old: list[Any], new: list[Any], *, seeds: bool) -> list[str]:
    before = {str(s.get("path")): s for s in old if isinstance(s, dict)}
    now = {str(s.get("path")): s for s in new if isinstance(s, dict)}
    found = [f"scenario file {path} was in the run, not now" for path in before
             if path not in now]
    found += [f"scenario file {path} is new" for path in now if path not in before]
    for path in (p for p in now if p in before):
        if before[path].get("sha256") != now[path].get("sha256"):
            found.append(f"scenario file {path} changed since (its SHA-256 differs)")
        elif seeds and before[path].get("seed") != now[path].get("seed"):
            found.append(f"scenario file {path} ran with seed {before[path].get('seed')}, "
                         f"now {now[path].get('seed')}")
    return found


def _shown(value: object) -> str:
    return "not given" if value is None or value == [] or value is False else repr(value)
