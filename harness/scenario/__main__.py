"""Command line for scenario files.

    python -m harness.scenario schema          # regenerate scenario.schema.json
    python -m harness.scenario check PATH...   # report every error, exit 1 if any
"""

from __future__ import annotations

import sys

from harness.scenario._loader import validate_paths
from harness.scenario._schema import write_schema

_USAGE = "usage: python -m harness.scenario schema | check PATH..."


def main(argv: list[str]) -> int:
    """Run one command; the exit code is 0 on success, 1 on errors, 2 on bad usage."""
    if argv == ["schema"]:
        print(f"wrote {write_schema()}")
        return 0
    if len(argv) >= 2 and argv[0] == "check":
        errors = validate_paths(argv[1:])
        for error in errors:
            print(error.message)
        return 1 if errors else 0
    print(_USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
