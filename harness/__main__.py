"""``python -m harness`` runs the command line."""

from harness._cli import main

raise SystemExit(main())
