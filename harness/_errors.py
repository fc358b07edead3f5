"""The one exception tree of the harness.

Every error a user can meet derives from :class:`HarnessError`, carries its
context as attributes, and has a message that says what was expected, what came,
and how to fix it::

    HarnessError
    ├── ConfigError            a fault, script or setting that cannot be honoured
    │   └── FaultError         a fault that does not fit the stream it met (.turn, .attempt)
    ├── ScenarioError          a YAML scenario file that cannot be loaded (file:line:col)
    ├── DiskError              a durable file operation failed (.operation, .path, .errno)
    ├── JobRunnerUnavailable   harness.ports: the job runner cannot be asked about a job now
    ├── JournalCorruptError    a journal line that is no record, with records after it (.line)
    ├── ReportError            a result folder a report cannot read or compare (.path)
    ├── CaptureError           harness import: a capture that is no exchange, HAR or SSE (.path)
    ├── AgentEntryError        an --agent or a tool target that cannot be imported or used
    ├── MalformedOutcome       harness.runner: an agent's run() returned no AgentOutcome
    ├── ForeverStalled         harness.intercept: a blocking client waits on an endless stall
                               with no read timeout (it would hang in production)
    ├── VirtualDeadlockError   every task waits and no virtual timer is set
    ├── StaleEpochError        harness.agent: a write-back under an epoch the session left (L7)
    ├── StaleLeaseError        harness.agent: work begun under an execution lease epoch that a
                               recovery has since replaced (seed 002 §19.3)
    ├── StreamFailure          harness.agent: one attempt failed (.error); caught inside the
                               stream client, never raised past it
    └── WorkerError            a harness error raised in a case's worker process (.problems)

Two families stand outside the tree on purpose, and are drawn here so that none
is a surprise::

    BaseException
    ├── SimulatedCrash         fakes: the process died at a persistence point. Not an
    │   │                      Exception, so an agent's ``except Exception`` cannot
    │   │                      swallow a crash the harness injected
    │   ├── DeadIncarnationError  the world refused an operation of a crashed incarnation
    │   └── ProcessGone        the loop of a crashed incarnation waited for time; a
    │                          dead process has none, and the run ends at its crash
    └── HarnessLimitExceeded   fakes: a case went past a harness limit (crash-disk bytes,
        │                      model requests); for the same reason not an Exception
        └── ProcessRefused     harness.intercept: the agent's code tried to start a
                               process inside a case (.call)
    Exception
    ├── ToolFailure            fakes: a scripted tool's own failure, raised as a user's
    │                          tool raises one; an agent must treat it as any tool error
    └── ConnectionResetError
        └── ToolReplyLost      fakes: a ``reply_lost`` tool did its work and its answer never
                               came back, as a dropped connection raises; an agent cannot
                               tell whether it took effect

Private signals never reach a user: ``ScenarioProblems`` (a ``ValueError``
that pydantic turns into a located :class:`ScenarioError`), the pytest
plugin's ``CaseFailed`` (a failed verdict, reported without a traceback), the
intercepted transport's ``_Silence`` (a read timeout in virtual time, raised to
the agent as its HTTP library's own ``ReadTimeout``), the YAML loader's
``_AliasCycleError`` and ``_AliasBombError`` (reported as a located
:class:`ScenarioError`); the fuzzer's ``_Violation`` (raised inside the property so
Hypothesis shrinks the schedule), the plugin's ``FuzzFound`` (a repro was written,
reported without a traceback), the runner's ``Rejoined`` (a recovering incarnation
reached the recorded run's state; the runner stops it and carries the record over) and
``harness run``'s ``Interrupted`` (a ``KeyboardInterrupt`` for SIGINT or SIGTERM, caught
by the command, which keeps the finished cases and exits 130 or 143) and the served
fakes' ``_Refused`` (a request turned away at the server's door, answered with a 4xx
JSON error), the trace decoder's ``TraceDataError`` (a ``ValueError``: what a case's
worker sent back is not a trace; the case fails, saying so), and the SDK parameter
walk's ``NotJson`` (the data holds a value only the SDK's own walk may change: that walk
runs instead).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


class HarnessError(Exception):
    """Root of every error raised by ``harness`` and ``fakes``."""


class AgentEntryError(HarnessError):
    """The agent under test (``--agent MODULE:CALLABLE``) or a tool's ``target`` is unusable.

    Raised before any case runs where possible; the message names the spec, what
    was found and how to fix it.
    """


def got_expected(what: str, *, got: str | None = None, expected: str = "",
                 hint: str = "") -> str:
    """The one shape of a message about a bad value: ``what: got …; expected …. hint``.

    Each part after ``what`` is left out when empty, so a problem that has no
    single offending value (a missing key) still reads as one sentence:

    >>> got_expected("seed", got="'seven'", expected="an integer >= 0")
    "seed: got 'seven'; expected an integer >= 0"
    >>> got_expected("missing 'turn'", expected="a turn number", hint="Add 'turn: 1'")
    "missing 'turn'; expected a turn number. Add 'turn: 1'"

    An empty ``what`` is for a reader that names the value itself (argparse begins
    with ``argument --port:``):

    >>> got_expected("", got="'http'", expected="a port 0-65535")
    "got 'http'; expected a port 0-65535"
    """
    text = what
    if got is not None:
        text += f": got {got}" if text else f"got {got}"
    if expected:
        text += f"; expected {expected}" if text else f"expected {expected}"
    if hint:
        text += f". {hint}"
    return text


class ConfigError(HarnessError, ValueError):
    """A declaration (fault, scripted response, setting) that cannot be honoured.

    Raised at construction time, never mid-run. ``field`` names the offending
    field, ``value`` is what came, ``allowed`` describes what is accepted.
    ``problem`` says what is wrong beyond a value out of bounds (two fields that exclude
    each other); the message then shows ``got`` as given, the words a scenario's
    message uses for the same rule (``None``: no value to show).
    """

    def __init__(self, field: str, value: object, allowed: str, hint: str = "", *,
                 problem: str = "", got: str | None = None) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        what, shown = (f"{field}: {problem}", got) if problem else (field, repr(value))
        super().__init__(got_expected(what, got=shown, expected=allowed, hint=hint))


class ScenarioError(HarnessError, ValueError):
    """A scenario file that cannot be loaded, located as ``file:line:col`` (1-based).

    ``path``, ``line`` and ``column`` say where (line and column are ``None`` when
    the file could not be read at all), ``value`` is what came, ``got`` its
    rendering in the message, ``expected`` what is allowed and ``hint`` the fix.
    One file can hold several mistakes: ``errors`` lists every one of them and
    ``str()`` prints them one per line; the attributes are those of the first::

        s.yaml:4:7: seed: wrong type: got 'seven' (a string); expected an integer >= 0
    """

    def __init__(
        self,
        path: str,
        line: int | None,
        column: int | None,
        problem: str,
        *,
        value: object = None,
        got: str | None = None,
        expected: str = "",
        hint: str = "",
    ) -> None:
        self.path = path
        self.line = line
        self.column = column
        self.problem = problem
        self.value = value
        self.got = got
        self.expected = expected
        self.hint = hint
        self.errors: list[ScenarioError] = [self]
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """This one error as a line: ``file:line:col: problem: got …; expected …. hint``."""
        where = self.path if self.line is None else f"{self.path}:{self.line}:{self.column}"
        return got_expected(f"{where}: {self.problem}", got=self.got, expected=self.expected,
                            hint=self.hint)

    @classmethod
    def combine(cls, errors: Sequence[ScenarioError]) -> ScenarioError:
        """One exception that reports every error in ``errors`` (at least one)."""
        first = errors[0]
        combined = cls(
            first.path, first.line, first.column, first.problem,
            value=first.value, got=first.got, expected=first.expected, hint=first.hint,
        )
        combined.errors = [single for error in errors for single in error.errors]
        combined.args = (str(combined),)
        return combined

    def __str__(self) -> str:
        return "\n".join(error.message for error in self.errors)


class VirtualDeadlockError(HarnessError):
    """Every task waits on something no timer or I/O will ever deliver."""

    def __init__(self, at: float) -> None:
        self.at = at
        super().__init__(
            f"virtual deadlock at t={at:.3f}s: every task is waiting and no timer is set "
            "(a stall 'forever' needs an idle watchdog on the reading side)"
        )


class DiskError(HarnessError):
    """A durable file operation failed: permission, missing folder, full disk, I/O error.

    ``operation`` is the disk port's method (``write``, ``fsync`` …), ``path`` the
    file or folder, ``errno`` the OS error number (``errno.ENOSPC`` …) or ``None``.
    Always chained (``raise DiskError(...) from exc``) to the ``OSError`` it wraps.
    """

    def __init__(self, operation: str, path: str, errno: int | None, reason: str) -> None:
        self.operation = operation
        self.path = path
        self.errno = errno
        super().__init__(f"{operation} {path!r} failed: {reason}")


class JournalCorruptError(HarnessError):
    """A journal line that is not a valid record sits before valid records.

    A torn last line is expected after a crash and is cut; a bad line in the
    middle means the file was damaged, and nothing after it is dropped silently.
    """

    def __init__(self, path: str, line: int, found: str, expected: str) -> None:
        self.path = path
        self.line = line
        self.found = found
        super().__init__(
            f"{path}:{line}: expected {expected}, found {found}; valid records follow, so "
            "this is not a torn tail: restore the file or move it aside to start afresh"
        )


class WorkerError(HarnessError):
    """A harness error raised inside a case's worker process, brought back as its lines.

    (Errors with located context do not survive pickling; their text does.)
    """

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(self.problems))


class ReportError(HarnessError):
    """A result folder that cannot be read, compared or gated: missing, empty, incompatible.

    ``path`` is the folder or file at fault (``None`` when the problem is between two
    folders); the message says what was expected and how to get it.
    """

    def __init__(self, message: str, path: str | None = None) -> None:
        self.path = path
        super().__init__(message)


class CaptureError(HarnessError):
    """A capture ``harness import`` cannot read: not a recorded exchange, a HAR file or SSE.

    ``path`` is the file; the message says what was found, what was expected and how to
    get a usable capture (``harness record``, a browser's HAR export, the raw stream).
    """

    def __init__(self, message: str, path: str | None = None) -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


def one_of(values: Iterable[object]) -> str:
    """Render allowed values for an error message: ``one of 'a', 'b'``."""
    return "one of " + ", ".join(repr(v) for v in values)


class FaultError(ConfigError):
    """A fault that cannot be applied to the stream it met (a split past its end …).

    Raised by the fake provider when a request reaches the fault; ``turn``,
    ``attempt`` and ``index`` (position among the faults keyed to that turn and
    attempt) say which declaration it was, so a scenario runner can point at its line.
    """

    def __init__(self, cause: ConfigError, *, turn: int, attempt: int, index: int,
                 kind: str) -> None:
        super().__init__(cause.field, cause.value, cause.allowed)
        self.turn = turn
        self.attempt = attempt
        self.index = index
        self.kind = kind
        self.args = (f"fault {kind!r} at turn {turn}, attempt {attempt}: {cause}",)
