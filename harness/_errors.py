"""The one exception tree of the harness.

Every error a user can meet derives from :class:`HarnessError`, carries its
context as attributes, and has a message that says what was expected, what came,
and how to fix it::

    HarnessError
    ├── ConfigError            a fault, script or setting that cannot be honoured
    └── VirtualDeadlockError   every task waits and no virtual timer is set
"""

from __future__ import annotations

from collections.abc import Iterable


class HarnessError(Exception):
    """Root of every error raised by ``harness`` and ``fakes``."""


class ConfigError(HarnessError, ValueError):
    """A declaration (fault, scripted response, setting) that cannot be honoured.

    Raised at construction time, never mid-run. ``field`` names the offending
    field, ``value`` is what came, ``allowed`` describes what is accepted.
    """

    def __init__(self, field: str, value: object, allowed: str, hint: str = "") -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        message = f"{field}: got {value!r}; expected {allowed}"
        if hint:
            message += f". {hint}"
        super().__init__(message)


class VirtualDeadlockError(HarnessError):
    """Every task waits on something no timer or I/O will ever deliver."""

    def __init__(self, at: float) -> None:
        self.at = at
        super().__init__(
            f"virtual deadlock at t={at:.3f}s: every task is waiting and no timer is set "
            "(a stall 'forever' needs an idle watchdog on the reading side)"
        )


def one_of(values: Iterable[object]) -> str:
    """Render allowed values for an error message: ``one of 'a', 'b'``."""
    return "one of " + ", ".join(repr(v) for v in values)
