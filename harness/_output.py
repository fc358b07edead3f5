"""Write run results to a folder: JSON lines and Parquet, one row per case and per attempt.

The same rows go to both formats so a script can read either. Files:

- ``cases.jsonl`` / ``cases.parquet``: one :class:`~harness.runner.CaseResult` per row,
  verdicts included (columns: :data:`CASE_COLUMNS`);
- ``attempts.jsonl`` / ``attempts.parquet``: one request attempt per row
  (columns: :data:`ATTEMPT_COLUMNS`);
- ``manifest.json``: what was run (format version, harness version, seed, scenario digests)
  and the SHA-256 of each result file, so a reader notices a file edited or lost since;
- ``journal.jsonl``, only while ``harness run`` runs (:class:`RunFolder`): each case as it
  finishes, so an interrupted run keeps them and ``--resume`` runs only the rest.

Values under secret-looking keys (``api_key: …``) in messages and evidence are
redacted (:mod:`harness._redact`).

Every file is written to a temporary name beside it, synced and renamed into place: a
harness killed mid-write leaves the old file or the new one, never half of one; the
temporary files a kill leaves behind are removed at the next write of the same files.
``harness run`` writes the result files from its journal, then the manifest, then
removes the journal: a folder caught between two of them still has its journal, and
``harness gate`` calls it incomplete (see :mod:`harness._journal`).

A ``suffix`` keeps parallel writers apart: pytest-xdist worker ``gw0`` writes
``cases-gw0.jsonl`` and never touches ``cases-gw1.jsonl``::

    write_results(Path("results"), results, suffix="-gw0")
"""

from __future__ import annotations

import dataclasses
import glob
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import __version__
from harness._errors import ConfigError
from harness._journal import (
    JOURNAL_NAME,
    JournalFile,
    JournalRead,
    entry_line,
    sync_folder,
)
from harness._redact import redact_text
from harness.checks import Verdict
from harness.runner import AgentOutput, AttemptRow, Case, CaseResult, critical

if TYPE_CHECKING:
    import polars as pl

#: Bumped when a column changes meaning or disappears; readers check it.
FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"

CASE_COLUMNS: tuple[str, ...] = (
    "scenario", "case_id", "source", "seed", "crash_point", "crash_when", "crash_class",
    "crash_during_recovery", "crash_reached", "passed", "stop_state", "stop_reason", "digest",
    "duplicates", "retries", "virtual_seconds", "error", "failed_invariants",
    "unknown_invariants", "side_effects", "verdicts", "exploration", "agent_output",
)
#: The most of a failing case's agent output its row keeps: the end of the tail the report
#: shows, so a CI job reading ``cases.jsonl`` sees why without the console.
OUTPUT_ROW_CHARS = 4096
ATTEMPT_COLUMNS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(AttemptRow))


def case_row(result: CaseResult) -> dict[str, Any]:
    """One case as a flat-ish mapping of plain values, in :data:`CASE_COLUMNS` order.

    >>> from harness.runner._results import Case
    >>> row = case_row(CaseResult(Case("s", Path("s.yaml"), 7), "complete", "done", (), "d", True))
    >>> row["case_id"], row["passed"], row["crash_point"]
    ('s', True, None)
    """
    case, crash = result.case, result.case.crash
    return {
        "scenario": case.scenario_name,
        "case_id": case.case_id,
        "source": str(case.source),
        "seed": case.seed,
        "crash_point": crash.point_id if crash else None,
        "crash_when": crash.when if crash else None,
        "crash_class": crash.crash_class if crash else None,
        "crash_during_recovery": crash.during_recovery if crash else None,
        "crash_reached": result.crash_reached,
        "passed": result.passed,
        "stop_state": result.stop_state,
        "stop_reason": redact_text(result.stop_reason),
        "digest": result.digest,
        "duplicates": result.duplicates,
        "retries": result.retries,
        "virtual_seconds": result.virtual_seconds,
        "error": None if result.error is None else redact_text(result.error),
        "failed_invariants": [v.invariant for v in result.verdicts if v.status == "fail"],
        "unknown_invariants": [v.invariant for v in result.verdicts if v.status == "unknown"],
        # A list of pairs, not a mapping: tool names vary per scenario, and Parquet
        # columns must not.
        "side_effects": [{"tool": t, "count": n} for t, n in sorted(result.side_effects.items())],
        "verdicts": [
            {"invariant": v.invariant, "status": v.status, "message": redact_text(v.message),
             "evidence": [redact_text(line) for line in v.evidence]}
            for v in result.verdicts
        ],
        # recorded, rejoined or replayed (harness.runner._explore): how the case ran.
        "exploration": result.exploration,
        "agent_output": _output_row(result),
    }


def _output_row(result: CaseResult) -> dict[str, Any] | None:
    """A failing case's agent output (its last :data:`OUTPUT_ROW_CHARS`), redacted; else None.

    A passing case's output is shown nowhere, so its row keeps none either.
    """
    output = result.output
    if output is None or result.passed:
        return None
    tail = output.tail[-OUTPUT_ROW_CHARS:]
    return {"tail": redact_text(tail), "written": output.written,
            "cut": output.cut or len(tail) < len(output.tail)}


def attempt_rows(results: Iterable[CaseResult]) -> list[dict[str, Any]]:
    """Every attempt of every result, as mappings in :data:`ATTEMPT_COLUMNS` order."""
    return [dataclasses.asdict(row) for result in results for row in result.attempts]


def write_results(folder: Path, results: Sequence[CaseResult], *, suffix: str = "") -> list[Path]:
    """Write ``cases`` and ``attempts`` as ``.jsonl`` and ``.parquet``; return the paths."""
    return write_rows(folder, [case_row(result) for result in results], attempt_rows(results),
                      suffix=suffix)


def result_names(suffix: str = "") -> tuple[str, ...]:
    """The names of the result files a writer with ``suffix`` writes."""
    return tuple(f"{stem}{suffix}{ext}" for stem in ("cases", "attempts")
                 for ext in (".jsonl", ".parquet"))


def write_rows(folder: Path, cases: list[dict[str, Any]], attempts: list[dict[str, Any]], *,
               suffix: str = "") -> list[Path]:
    """Write case and attempt rows (:func:`case_row`, :func:`attempt_rows`) as
    ``.jsonl`` and ``.parquet``; return the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    clean_strays(folder, result_names(suffix))
    written = [
        _write_jsonl(folder / f"cases{suffix}.jsonl", cases),
        _write_jsonl(folder / f"attempts{suffix}.jsonl", attempts),
    ]
    for stem, rows, schema in (("cases", cases, _case_schema()),
                               ("attempts", attempts, _attempt_schema())):
        frame = _frame(rows, schema)
        written.append(write_atomic(folder / f"{stem}{suffix}.parquet", frame.write_parquet))
    return written


def write_manifest(
    folder: Path, sources: Sequence[tuple[str, Path, int]], *, seed: int | None, crash: str,
    files: Sequence[Path] = (), shard: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``manifest.json``: what ran, so a results folder explains itself.

    ``sources`` are ``(scenario name, file, seed used)``; ``files`` the result files
    written beside it, recorded with their SHA-256. No wall-clock time is recorded:
    the same inputs give the same manifest, byte for byte. A ``shard`` record
    (:mod:`harness._shard`) goes last, so that ``harness merge`` drops it and writes
    the whole run's manifest.
    """
    manifest: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "harness_version": __version__,
        "seed_override": seed,
        "crash": crash,
        "scenarios": [
            {"name": name, "path": str(path), "seed": used, "sha256": file_digest(path)}
            for name, path, used in sources
        ],
    }
    if shard is not None:
        manifest["shard"] = dict(shard)
    return write_manifest_data(folder, manifest, files)


def write_manifest_data(folder: Path, manifest: Mapping[str, Any],
                        files: Sequence[Path] = ()) -> Path:
    """Write ``manifest`` as ``manifest.json`` with the SHA-256 of ``files`` under ``files``
    (after its other keys and before a ``shard`` record)."""
    manifest = dict(manifest)
    shard = manifest.pop("shard", None)
    manifest["files"] = {path.name: file_digest(path) for path in sorted(files)}
    if shard is not None:
        manifest["shard"] = shard
    folder.mkdir(parents=True, exist_ok=True)
    clean_strays(folder, [MANIFEST_NAME])
    text = json.dumps(manifest, indent=2) + "\n"
    return write_atomic(folder / MANIFEST_NAME, lambda tmp: tmp.write_text(text, "utf-8"))


def check_writable_folder(folder: Path, option: str) -> None:
    """Create ``folder`` if needed and prove a file can be written there, before any work.

    A run whose results cannot be written is refused up front rather than lost at the end.
    """
    if folder.exists() and not folder.is_dir():
        raise ConfigError(option, str(folder), "a folder for the results",
                          "It names a file; pick another path")
    probe = folder / f".write-check-{os.getpid()}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        raise ConfigError(option, str(folder), "a folder the harness can write to",
                          f"Cannot write there ({error.strerror or error}); pick another "
                          "path or fix its permissions") from error


@contextmanager
def removed_if_left_empty(folder: Path) -> Iterator[None]:
    """Remove ``folder``, and the parents of it the block created, if they are left empty.

    A command that stops on an error found after it made its ``--out`` folder leaves no
    empty folder behind; a folder that existed before the block is never removed.
    """
    created = [path for path in [folder, *folder.parents] if not path.exists()]
    try:
        yield
    finally:
        for path in created:  # the deepest first
            try:
                path.rmdir()
            except OSError:  # written into (or gone): kept as it is, and its parents too
                break


def file_digest(path: Path) -> str:
    """The SHA-256 of a file's bytes, as hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_atomic(path: Path, write: Callable[[Path], object]) -> Path:
    """Call ``write`` on a temporary file beside ``path``, then rename it to ``path``.

    A reader (or a harness killed half-way) sees the old file or the new one, whole;
    synced before the rename, so a power loss after it leaves the new one whole too.
    """
    # A per-process name keeps parallel writers apart; the file gets the usual umask mode.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        _sync_file(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    sync_folder(path.parent)
    return path


def _sync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def clean_strays(folder: Path, names: Iterable[str]) -> None:
    """Remove the temporary files :func:`write_atomic` left for ``names`` when killed.

    Only these names' own: a pytest-xdist worker cleans its suffixed files and never
    another worker's, which may be writing at this moment.
    """
    for name in names:
        pattern = re.compile(rf"\.{re.escape(name)}\.[0-9]+\.tmp")
        for path in folder.glob(f".{glob.escape(name)}.*.tmp"):
            if pattern.fullmatch(path.name):
                path.unlink(missing_ok=True)


class RunFolder:
    """The ``--out`` folder of ``harness run`` while it runs: each case durable as it ends.

    :meth:`record` appends a finished case to the journal (:mod:`harness._journal`);
    the first one of a new run writes the journal's header and removes the old
    ``manifest.json`` (from then on the folder is an incomplete run, not the old one
    with new parts). :meth:`finish` writes the result files from the journal, in the
    planned order, then the manifest, then removes the journal::

        out = RunFolder(Path("results"), header)           # or resumed=read_journal(...)
        out.record(0, result)
        out.finish(sources, seed=None, crash="as-written")
    """

    def __init__(self, folder: Path, header: Mapping[str, Any],
                 resumed: JournalRead | None = None) -> None:
        self.folder, self.header, self._resumed = folder, header, resumed
        self.entries: dict[int, Mapping[str, Any]] = dict(resumed.entries) if resumed else {}
        self._journal: JournalFile | None = None
        #: Whether the folder holds this run's journal (resumed, or a first case in).
        self.started = resumed is not None

    @property
    def total(self) -> int:
        return len(self.header["plan"]["cases"])

    @property
    def journal(self) -> Path:
        return self.folder / JOURNAL_NAME

    def record(self, index: int, result: CaseResult) -> None:
        """Make case ``index``'s result durable; a stop signal waits until it is."""
        entry = {"index": index, "case_id": result.case.case_id, "case": case_row(result),
                 "attempts": [dataclasses.asdict(row) for row in result.attempts],
                 "advice": [redact_text(v.advice) for v in result.verdicts]}
        line = entry_line(entry)
        with critical():
            if self._journal is None:
                self._journal = self._open()
            self._journal.append(line)
            # What a resumed run reads back, so that both write the same bytes.
            self.entries[index] = json.loads(line)

    def _open(self) -> JournalFile:
        if self._resumed is not None:
            return JournalFile.reopen(self._resumed)
        clean_strays(self.folder, [JOURNAL_NAME, MANIFEST_NAME, *result_names()])
        journal = JournalFile.create(self.journal, self.header)
        self.started = True
        (self.folder / MANIFEST_NAME).unlink(missing_ok=True)
        sync_folder(self.folder)
        return journal

    def finish(self, sources: Sequence[tuple[str, Path, int]], *, seed: int | None,
               crash: str, shard: Mapping[str, Any] | None = None) -> list[Path]:
        """Write the result files and the manifest; remove the journal. Every case is in.

        A shard's manifest also counts each row's attempts, for ``harness merge``.
        """
        missing = [i for i in range(self.total) if i not in self.entries]
        assert not missing, f"cases {missing[:5]} never finished"
        ordered = [self.entries[index] for index in range(self.total)]
        written = write_rows(self.folder, [dict(entry["case"]) for entry in ordered],
                             [dict(row) for entry in ordered for row in entry["attempts"]])
        if shard is not None:
            shard = {**shard, "attempts": [len(entry["attempts"]) for entry in ordered]}
        write_manifest(self.folder, sources, seed=seed, crash=crash, files=written, shard=shard)
        self.close()
        self.journal.unlink(missing_ok=True)
        sync_folder(self.folder)
        return written

    def close(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None


def result_from_entry(case: Case, entry: Mapping[str, Any]) -> CaseResult:
    """The result a journal line records, for the summary and the failures of a resumed run.

    Its texts are the redacted ones of the row, and it has no trace (the failure text
    shows no timeline for it).
    """
    row = entry["case"]
    advice = list(entry.get("advice") or []) + [""] * len(row["verdicts"])
    verdicts = tuple(Verdict(v["invariant"], v["status"], v["message"], tuple(v["evidence"]),
                             advice[i]) for i, v in enumerate(row["verdicts"]))
    return CaseResult(
        case, row["stop_state"], row["stop_reason"], verdicts, row["digest"],
        bool(row["crash_reached"]),
        side_effects={pair["tool"]: pair["count"] for pair in row["side_effects"]},
        duplicates=row["duplicates"], retries=row["retries"],
        virtual_seconds=row["virtual_seconds"],
        attempts=tuple(AttemptRow(**attempt) for attempt in entry["attempts"]),
        error=row["error"], exploration=row["exploration"],
        output=_output_from_row(row.get("agent_output")))


def _output_from_row(kept: Mapping[str, Any] | None) -> AgentOutput | None:
    """The output a row kept, as the report of a resumed run shows it."""
    if not kept:
        return None
    tail = str(kept["tail"])
    written = int(kept["written"])
    return AgentOutput(tail, written, written if not kept["cut"] else len(tail.encode()))


def result_from_row(row: Mapping[str, Any]) -> CaseResult:
    """The result a ``cases.jsonl`` row records, without its attempts or advice: enough
    for a summary and for what no case reached (``harness merge``)."""
    from harness.runner import CrashSpec

    crash = None
    if row["crash_point"] is not None:
        crash = CrashSpec(row["crash_point"], row["crash_when"], row["crash_class"],
                          bool(row["crash_during_recovery"]))
    case = Case(row["scenario"], Path(row["source"]), row["seed"], crash)
    return result_from_entry(case, {"case": row, "attempts": []})


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> Path:
    def write(tmp: Path) -> None:
        with tmp.open("w", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")

    return write_atomic(path, write)


def _frame(rows: list[dict[str, Any]], schema: pl.Schema) -> pl.DataFrame:
    import polars as pl

    # An explicit schema keeps the columns and types even when there are no rows
    # (a run without attempts still writes a readable attempts.parquet).
    return pl.DataFrame(rows, schema=schema, orient="row")


def _case_schema() -> pl.Schema:
    import polars as pl

    text, whole, flag = pl.String(), pl.Int64(), pl.Boolean()
    verdict = pl.Struct({"invariant": text, "status": text, "message": text,
                         "evidence": pl.List(text)})
    columns: dict[str, pl.DataType] = {
        "scenario": text, "case_id": text, "source": text, "seed": whole,
        "crash_point": text, "crash_when": text, "crash_class": text,
        "crash_during_recovery": flag, "crash_reached": flag, "passed": flag,
        "stop_state": text, "stop_reason": text, "digest": text,
        "duplicates": whole, "retries": whole, "virtual_seconds": pl.Float64(),
        "error": text, "failed_invariants": pl.List(text), "unknown_invariants": pl.List(text),
        "side_effects": pl.List(pl.Struct({"tool": text, "count": whole})),
        "verdicts": pl.List(verdict), "exploration": text,
        "agent_output": pl.Struct({"tail": text, "written": whole, "cut": flag}),
    }
    assert tuple(columns) == CASE_COLUMNS  # the JSON lines and the Parquet agree
    return pl.Schema(columns)


def _attempt_schema() -> pl.Schema:
    import polars as pl

    types: dict[str, pl.DataType] = {"int": pl.Int64(), "float": pl.Float64(),
                                     "str": pl.String()}
    schema: dict[str, pl.DataType] = {}
    for f in dataclasses.fields(AttemptRow):
        # Annotations are strings ("int | None"); the first word names the type.
        schema[f.name] = types[str(f.type).split()[0]]
    return pl.Schema(schema)
