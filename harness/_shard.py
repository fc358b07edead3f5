"""One run spread over machines: ``harness run --shard K/N`` and ``harness merge``.

A case belongs to shard ``K`` of ``N`` when the SHA-256 of its id, read as a number, is
``K - 1`` modulo ``N``: the share depends on the case alone, never on its place in the
plan, so adding a scenario (or a point) moves no other case to another shard. Every
shard plans the whole run (the same preflight as an unsharded run) and runs its share.

A shard's ``manifest.json`` is the whole run's, plus a ``shard`` object: ``K``, ``N``,
the whole plan (options, scenario digests, every case id in order), the plan index of
each of its rows, each row's count of attempts and each scenario's declared
expectations. From that, :func:`merge_shards` writes the files the whole run writes,
byte for byte, and refuses shards of different plans, a shard given twice or missing,
an interrupted shard, and a folder that is no shard's::

    harness run scenarios --shard 1/3 --out shard-1     # on three machines
    harness merge results shard-1 shard-2 shard-3        # then on one
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from harness._errors import ConfigError
from harness._journal import JOURNAL_NAME, plan_differences, read_journal
from harness._options import output_path

#: The key of a shard's own record in its ``manifest.json``.
SHARD_KEY: Final = "shard"
SHARD_FORM: Final = "K/N: whole numbers with 1 <= K <= N, such as 2/3"


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (both from 1), as ``--shard`` names it."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, case_id: str) -> bool:
        """Whether the case with this id is this shard's.

        >>> [Shard(k, 3).holds("hello") for k in (1, 2, 3)].count(True)
        1
        """
        return shard_number(case_id, self.count) == self.index

    def chosen(self, case_ids: Sequence[str]) -> list[int]:
        """The plan indices of this shard's cases, in the plan's order."""
        return [index for index, case_id in enumerate(case_ids) if self.holds(case_id)]


def shard_number(case_id: str, count: int) -> int:
    """The shard (1 to ``count``) the case ``case_id`` belongs to: a hash, not a position."""
    digest = hashlib.sha256(case_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def parse_shard(text: str) -> Shard:
    """Read ``--shard K/N``; argparse turns the error into a usage line and exit 2.

    >>> parse_shard("2/3")
    Shard(index=2, count=3)
    """
    index_text, slash, count_text = text.partition("/")
    if not slash or not index_text.strip().isdigit() or not count_text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"got {text!r}; expected {SHARD_FORM}")
    index, count = int(index_text), int(count_text)
    if count < 1 or not 1 <= index <= count:
        why = "N must be at least 1" if count < 1 else f"K must be between 1 and {count}"
        raise argparse.ArgumentTypeError(f"got {text!r}: {why}; expected {SHARD_FORM}")
    return Shard(index, count)


def shard_record(shard: Shard, whole_plan: Mapping[str, Any], indices: Sequence[int],
                 expectations: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """What a shard's manifest says of it (its rows' attempt counts are added at the end)."""
    return {"index": shard.index, "count": shard.count, "plan": dict(whole_plan),
            "cases": list(indices),
            "expectations": {name: list(checks) for name, checks in expectations.items()}}


# ------------------------------------------------------------------------------ merge


def add_merge_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``harness merge OUT SHARD_DIR...``."""
    merge = commands.add_parser(
        "merge", help="join the folders of 'harness run --shard K/N' into one run's results",
        description="Write into OUT the files one unsharded 'harness run' writes (cases and "
                    "attempts as JSON lines and Parquet, manifest.json), byte for byte, from "
                    "the folders of every shard 1/N to N/N of the same run. Exit 0: merged, "
                    "no case failed; 1: merged, a case failed (or, under --strict, something "
                    "no case of any shard reached); 2: bad input, nothing written.")
    merge.add_argument("out", type=output_path, metavar="OUT", help="folder for the merged run")
    merge.add_argument("shards", nargs="+", type=Path, metavar="SHARD_DIR",
                       help="the --out folder of each shard, in any order")
    merge.add_argument("--strict", action="store_true",
                       help="fail when a crash point, scripted fault or written-out "
                            "expectation was reached by no case of any shard, naming each "
                            "(shards run with --strict have it checked here in any case)")


@dataclass(frozen=True)
class _ShardFolder:
    folder: Path
    manifest: dict[str, Any]
    cases: list[dict[str, Any]]
    attempts: list[list[dict[str, Any]]]

    @property
    def record(self) -> Mapping[str, Any]:
        record: Mapping[str, Any] = self.manifest[SHARD_KEY]
        return record

    @property
    def name(self) -> str:
        return f"{self.record['index']}/{self.record['count']}"


def run_merge(args: argparse.Namespace) -> int:
    """``harness merge``: the exit code (2 goes through :class:`HarnessError`)."""
    from harness._output import check_writable_folder

    shards = [_read_shard(Path(folder)) for folder in args.shards]
    plan = _check_same_run(shards)
    order = _check_every_case_once(shards, len(plan["cases"]))
    if (Path(args.out) / JOURNAL_NAME).exists():
        raise ConfigError("OUT", str(args.out), "a folder without an interrupted run's "
                          f"{JOURNAL_NAME}", "Pick another folder, or remove that run first")
    check_writable_folder(Path(args.out), "OUT")
    cases = [shards[s].cases[row] for s, row in order]
    attempts = [line for s, row in order for line in shards[s].attempts[row]]
    _write_merged(Path(args.out), shards[0].manifest, cases, attempts)
    return _judge_merged(args, plan, shards, cases)


def _read_shard(folder: Path) -> _ShardFolder:
    """One shard's folder, checked whole; a ConfigError naming the folder otherwise."""
    from harness._output import MANIFEST_NAME

    if not folder.is_dir():
        raise ConfigError("SHARD_DIR", str(folder), "the --out folder of a 'harness run "
                          "--shard K/N'", "It is not a folder")
    manifest_path = folder / MANIFEST_NAME
    journal = read_journal(folder / JOURNAL_NAME)
    if not manifest_path.exists():
        if journal is not None or (folder / JOURNAL_NAME).exists():
            done = f"{len(journal.entries)} of {journal.total} cases" if journal else \
                "its journal is damaged"
            resume = journal.resume if journal else "run the shard again"
            raise ConfigError("SHARD_DIR", str(folder), "a finished shard, but its run was "
                              f"interrupted ({done}: a journal and no manifest)",
                              f"Finish it first: {resume}")
        raise ConfigError("SHARD_DIR", str(folder), "a results folder with a manifest.json",
                          "Give the --out folder of each 'harness run --shard K/N'")
    manifest = _json_object(manifest_path)
    if not isinstance(manifest.get(SHARD_KEY), dict):
        raise ConfigError("SHARD_DIR", str(folder), "a shard's results, but its run had no "
                          "--shard (a whole run's folder needs no merge)",
                          "Run each part with 'harness run ... --shard K/N'")
    _check_files(folder, manifest)
    record = manifest[SHARD_KEY]
    cases = _json_lines(folder / "cases.jsonl")
    flat = _json_lines(folder / "attempts.jsonl")
    counts = record.get("attempts")
    if not isinstance(counts, list) or len(counts) != len(cases) or \
            len(record.get("cases") or []) != len(cases) or sum(counts) != len(flat):
        raise ConfigError("SHARD_DIR", str(folder), "a shard whose manifest counts its rows",
                          "Its files do not match its manifest; run the shard again")
    attempts, start = [], 0
    for count in counts:
        attempts.append(flat[start:start + count])
        start += count
    return _ShardFolder(folder, manifest, cases, attempts)


def _check_files(folder: Path, manifest: Mapping[str, Any]) -> None:
    from harness._output import file_digest

    for name, digest in (manifest.get("files") or {}).items():
        path = folder / name
        if not path.is_file() or file_digest(path) != digest:
            state = "is missing" if not path.is_file() else "changed since its run wrote it"
            raise ConfigError("SHARD_DIR", str(folder), "a shard folder as its run left it",
                              f"{name} {state}; run the shard again")


def _check_same_run(shards: Sequence[_ShardFolder]) -> Mapping[str, Any]:
    """The one plan every shard is part of; a ConfigError for shards of different runs."""
    first = shards[0]
    plan: Mapping[str, Any] = first.record["plan"]
    for other in shards[1:]:
        if other.record["count"] != first.record["count"]:
            raise ConfigError("SHARD_DIR", str(other.folder), f"a shard of {first.name}'s run "
                              f"({first.folder}), but it is {other.name}: the runs were split "
                              "into different numbers of shards",
                              "Give the shards of one 'harness run --shard K/N' with one N")
        differences = plan_differences(plan, other.record["plan"])
        if not differences and other.record["plan"] != plan:
            differences = ["the plans differ"]
        if differences:
            raise ConfigError("SHARD_DIR", str(other.folder), f"a shard of the same run as "
                              f"{first.folder} (shard {first.name}), but it is of another: "
                              + "; ".join(differences),
                              "Run every shard with the same scenarios, options and harness")
    return plan


def _check_every_case_once(shards: Sequence[_ShardFolder], total: int
                           ) -> list[tuple[int, int]]:
    """(shard, row) of each planned case in the plan's order; refused when a shard is
    given twice or missing, or the rows of the shards do not cover the plan once."""
    count = int(shards[0].record["count"])
    seen: dict[int, Path] = {}
    for shard in shards:
        index = int(shard.record["index"])
        if index in seen:
            raise ConfigError("SHARD_DIR", str(shard.folder), f"each shard once, but shard "
                              f"{shard.name} is also {seen[index]}", "Give each K once")
        seen[index] = shard.folder
    missing = [k for k in range(1, count + 1) if k not in seen]
    if missing:
        names = ", ".join(f"{k}/{count}" for k in missing)
        raise ConfigError("SHARD_DIR", " ".join(str(s.folder) for s in shards),
                          f"every shard 1/{count} to {count}/{count}, but shard(s) {names} "
                          "missing", "Give the folder of each; run the missing one(s) with "
                          f"--shard {missing[0]}/{count}")
    where: dict[int, tuple[int, int]] = {}
    for number, shard in enumerate(shards):
        for row, index in enumerate(shard.record["cases"]):
            if index in where or not 0 <= index < total:
                raise ConfigError("SHARD_DIR", str(shard.folder), "shards whose cases do not "
                                  f"overlap, but plan case {index} is in more than one",
                                  "Run the shards again")
            where[index] = (number, row)
    if len(where) != total:
        raise ConfigError("SHARD_DIR", str(shards[0].folder), f"shards holding all {total} "
                          f"planned cases, but they hold {len(where)}", "Run the shards again")
    return [where[index] for index in range(total)]


def _write_merged(out: Path, manifest: Mapping[str, Any], cases: list[dict[str, Any]],
                  attempts: list[dict[str, Any]]) -> None:
    """The whole run's files: its rows, then its manifest (the shard's without the shard)."""
    from harness._output import write_manifest_data, write_rows

    written = write_rows(out, cases, attempts)
    whole = {key: value for key, value in manifest.items() if key != SHARD_KEY}
    write_manifest_data(out, whole, written)


def _judge_merged(args: argparse.Namespace, plan: Mapping[str, Any],
                  shards: Sequence[_ShardFolder], cases: list[dict[str, Any]]) -> int:
    """The merged run's summary, as ``harness run`` prints it; 1 when a case failed or
    (``--strict``, or shards run with it) something no case of any shard reached."""
    from harness._cli import summary_table
    from harness._output import result_from_row
    from harness.runner import never_reached_declared, proved_nothing_line

    results = [result_from_row(row) for row in cases]
    for result in results:
        if result.status == "fail":
            print(f"FAILED {result.case.case_id}", file=sys.stderr)
    line = proved_nothing_line(results)
    if line is not None:
        print(line)
    print(summary_table(results))
    print(f"merged {len(shards)} shard(s), {len(results)} cases, into {args.out}/",
          file=sys.stderr)
    unreached: list[str] = []
    if args.strict or (plan.get("options") or {}).get("strict"):
        declared: dict[str, list[str]] = {}
        for shard in shards:
            declared.update(shard.record.get("expectations") or {})
        unreached = [str(thing) for thing in never_reached_declared(results, declared)]
        if unreached:
            print(f"harness merge --strict: {len(unreached)} thing(s) no case of any shard "
                  "reached, so the run proves nothing of them:", file=sys.stderr)
        for thing in unreached:
            print(f"  {thing}", file=sys.stderr)
    failed = any(result.status == "fail" for result in results)
    return 1 if failed or unreached else 0


def _json_object(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ConfigError("SHARD_DIR", str(path.parent), "a readable manifest.json",
                          f"{path.name}: {error}") from error
    if not isinstance(value, dict):
        raise ConfigError("SHARD_DIR", str(path.parent), "a manifest.json holding an object")
    return value


def _json_lines(path: Path) -> list[dict[str, Any]]:
    try:
        return [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ConfigError("SHARD_DIR", str(path.parent), f"a readable {path.name}",
                          str(error)) from error

