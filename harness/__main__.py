"""``python -m harness`` runs the command line."""

from harness._cli import main

if __name__ == "__main__":
    raise SystemExit(main())
