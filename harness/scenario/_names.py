"""Every closed vocabulary of the scenario format, each spelled in exactly one place.

The ``Literal`` aliases type the model fields; the tuples beside them are the same
values for error messages, the fakes and the runner. Changing a name here changes
the JSON Schema, the loader's "did you mean" lists and every consumer at once. The
dialects (:mod:`harness.ports`) and the tool kinds (:mod:`harness.ports`) are named where
the agent core and the fakes read them too::

    >>> "crlf" in LINE_ENDING_STYLES
    True
"""

from __future__ import annotations

from typing import Final, Literal, get_args

from fakes import POINT_OPS
from harness import ports
from harness.ports import CONCURRENCY_SAFE_TOOL_KINDS

# Tool kinds are the neutral layer's (one description per kind: harness.ports.TOOL_KIND_TRAITS).
# Reading and inspecting change nothing, so they may overlap with other calls by
# default; every other kind writes a resource and runs alone unless declared safe.
CONCURRENCY_SAFE_KINDS: Final = CONCURRENCY_SAFE_TOOL_KINDS

# A tool reply's outcomes are read alike by the scripted model and the checkers
# (harness.ports.classify_reply), so they are named where both read them.
ToolOutcome = ports.ToolOutcome
TOOL_OUTCOMES: Final = ports.TOOL_OUTCOMES

# Why the model stops is the neutral layer's (harness.ports.FinishReason): the fakes send it
# and the trace keeps it.
ScriptedFinish = ports.FinishReason
FINISH_REASONS: Final = ports.FINISH_REASONS

LineEndingStyle = Literal["lf", "cr", "crlf"]
LINE_ENDING_STYLES: Final[tuple[LineEndingStyle, ...]] = get_args(LineEndingStyle)

# HTTP statuses and crash classes are the fakes' own vocabulary (fakes.HttpErrorStatus,
# fakes.CrashClass); the scenario format takes them from there.

CrashPointSelection = Literal["all", "none"]


# I1 to I11 are DESIGN §6; L3 is the loop rule of DESIGN §5 that seed 002 §19.6 makes a
# must-pass condition: a repeated identical error ends in a stop or a change of course.
InvariantId = Literal["I1", "I2", "I3", "I4", "I5", "I6", "I7", "I8", "I9", "I10", "I11", "L3"]
INVARIANT_IDS: Final[tuple[InvariantId, ...]] = get_args(InvariantId)
# I5 (goal identity across restarts) judges goals: every scenario with a `goal` block gets
# it (harness.checks._goals); listing it by default would make every other one `unknown`.
DEFAULT_INVARIANTS: Final[tuple[InvariantId, ...]] = tuple(i for i in INVARIANT_IDS if i != "I5")

# Patterns, each with the words an error message uses to explain it.
SCENARIO_NAME_PATTERN: Final = r"^[a-z0-9][a-z0-9-]*$"
TOOL_NAME_PATTERN: Final = r"^[A-Za-z0-9_-]{1,64}$"
TARGET_PATTERN: Final = r"^[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_.]*$"
# An agent's own persistence point (an operation the crash disk counts: run would refuse
# any other), or a world event (harness.runner._points).
CRASH_POINT_PATTERN: Final = (
    r"^(?:[a-z][a-z0-9_]*:(?:" + "|".join(POINT_OPS) + r")#[1-9][0-9]*"
    r"|after_(?:tool|signal):[A-Za-z0-9_-]{1,64}#[1-9][0-9]*"
    r"|(?:before_request|mid_stream|after_response):[1-9][0-9]*"
    r"|all)$"
)
PATTERN_MEANINGS: Final[dict[str, str]] = {
    SCENARIO_NAME_PATTERN: "lowercase letters, digits and '-', such as 'parallel-append-crash'",
    TOOL_NAME_PATTERN: "1 to 64 letters, digits, '_' or '-', such as 'send_mail'",
    TARGET_PATTERN: "a function of the agent's code, 'module:function', such as "
                    "'mypackage.tools:send_mail'",
    CRASH_POINT_PATTERN: "a point id '<role>:<op>#<n>' with op one of " + ", ".join(POINT_OPS)
                         + ", such as 'journal:fsync#3', or a world "
                         "event: 'after_tool:<tool>#<k>', 'before_request:<turn>', "
                         "'mid_stream:<turn>', 'after_response:<turn>'; 'all' in a list adds "
                         "every point of the agent's own files",
}
