#!/usr/bin/env python3
"""Compare the trace digest of every case in two result folders.

A refactoring must not change behaviour: run the suite on the commit before and after,
then compare. Exit 0 when both folders hold the same cases with the same digests, 1
otherwise (each difference is printed), 2 on bad input.

    harness run scenarios/ --out /tmp/before     # on the old commit
    harness run scenarios/ --out /tmp/after      # on the new commit
    python ci/compare-digests.py /tmp/before /tmp/after
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def case_digests(folder: Path) -> dict[str, str]:
    """Map each case id of ``folder/cases.jsonl`` to its trace digest."""
    digests: dict[str, str] = {}
    with (folder / "cases.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            digests[row["case_id"]] = row["digest"]
    return digests


def differences(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Say, one line each, which case is missing, new or has another digest."""
    lines = [f"only before: {case}" for case in sorted(before.keys() - after.keys())]
    lines += [f"only after: {case}" for case in sorted(after.keys() - before.keys())]
    lines += [
        f"digest changed: {case} {before[case]} -> {after[case]}"
        for case in sorted(before.keys() & after.keys())
        if before[case] != after[case]
    ]
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    before, after = (case_digests(Path(folder)) for folder in argv)
    found = differences(before, after)
    for line in found:
        print(line)
    print(f"{len(before)} case(s) before, {len(after)} after, {len(found)} difference(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
