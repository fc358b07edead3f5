"""The run options the command line and the pytest plugin share: a seed, a crash selection,
a tool target.

Both front ends hand the same scenarios to the runner; reading ``--seed`` and
applying a seed or crash override is one rule, kept here, light to import, so
that neither front end imports the other.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from harness._errors import got_expected

if TYPE_CHECKING:
    from collections.abc import Sequence

    from harness.runner import Case
    from harness.scenario import Scenario

#: The largest seed a scenario file may give (its schema's bound); --seed keeps to it too.
MAX_SEED = 2**63 - 1

#: Real seconds a case may take before it is killed; far above any honest case. Kept here,
#: not in harness.runner._contain, so that ``--case-timeout``'s help costs no runner import.
DEFAULT_CASE_TIMEOUT = 60.0
#: MiB a case's worker may hold in memory before the case is stopped (``--case-memory``).
DEFAULT_CASE_MEMORY_MIB = 4096


def output_path(text: str) -> Path:
    """An ``--out`` value: a path, never empty (``""`` would mean the current folder).

    >>> output_path("results")
    PosixPath('results')
    """
    return Path(_not_blank(text, "a path to write to, such as 'results' (an empty one would "
                                 "write into the current folder)"))


def _not_blank(text: str, expected: str) -> str:
    """``text``, unless it is empty or only spaces: then the argparse error naming what was
    ``expected``."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"got {text!r}; expected {expected}")
    return text


def input_path(text: str) -> str:
    """A path to read (a scenario, a capture): never empty (``""`` would mean the current
    folder, whose every scenario would be taken).

    >>> input_path("scenarios/mail.yaml")
    'scenarios/mail.yaml'
    """
    return _not_blank(text, "a file or folder to read, such as 'scenarios/'")


def command_text(text: str) -> str:
    """An ``--exec`` command: a shell command line, not a blank one.

    >>> command_text("node agent.js")
    'node agent.js'
    """
    return _not_blank(text, "a shell command that starts the agent, such as 'node agent.js'")


def parse_seed(text: str) -> int:
    """A ``--seed`` value: a whole number from 0 to :data:`MAX_SEED`, as in a scenario file.

    >>> parse_seed("33")
    33
    """
    return whole_number(text, 0, MAX_SEED, f"a whole number from 0 to {MAX_SEED}")


def parse_env_name(text: str) -> str:
    """A ``--pass-env`` value: the name of an environment variable, not its value.

    >>> parse_env_name("MY_SETTING")
    'MY_SETTING'
    """
    from harness._environment import NAME_PATTERN

    return _matching(text, NAME_PATTERN,
                     "the name of an environment variable such as MY_SETTING (letters, "
                     "digits and '_'; the agent gets the harness's value)")


#: The help of two switches ``harness run`` and the pytest plugin share (``--replay`` there,
#: ``--harness-replay`` here): one text each, so the two never describe one switch apart.
CHECK_DETERMINISM_HELP = ("run each case twice; a case whose trace digests differ fails with "
                          "the first differing event")
REPLAY_HELP = ("run every crash case from its start, instead of from a copy of the scenario's "
               "recorded run (slower; the same traces)")


#: The crash setting: what every scenario of a run crashes, by name, with what it does to a
#: scenario with a crash block and to one without. The command line (``harness run
#: --crash``), the plugin (``--harness-crash``) and the ini (``harness_crash``) take these
#: names and no others, and their help and the README say the same.
CRASH_SETTINGS: dict[str, str] = {
    "as-written": "each scenario as its crash block says (its points, whens and classes); "
                  "a scenario without one runs once, uncrashed (the default)",
    "none": "every scenario runs once, uncrashed, crash block or not",
    "listed": "only a crash block that lists its points, as written; a block that says "
              "'all', and a scenario without one, run once, uncrashed",
    "sample": "as-written, then of each kind of crash (point without its ordinal, when, "
              "class) only the middle occurrence: a quick pass; a scenario without a crash "
              "block runs once, uncrashed",
    "all-points": "every scenario, even one without a crash block, crashes at every point "
                  "of the agent's own files its recorded run reaches, before and after, in "
                  "the block's classes (every class without one): slow",
}

#: The default crash setting.
AS_WRITTEN = "as-written"

#: Spellings an earlier release documented, and the setting each still means.
OLD_CRASH_SETTINGS = {"all": "all-points"}


def crash_settings_help() -> str:
    """The crash settings as one help text: each name and what it does."""
    return "; ".join(f"{name}: {what}" for name, what in CRASH_SETTINGS.items())


def parse_crash_setting(text: str) -> str:
    """A ``--crash`` / ``harness_crash`` value: one of :data:`CRASH_SETTINGS` (an old
    spelling gives its setting; :func:`crash_setting_note` says it is old).

    >>> parse_crash_setting("sample"), parse_crash_setting("all")
    ('sample', 'all-points')
    >>> parse_crash_setting("everything")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    argparse.ArgumentTypeError: got 'everything'; expected one of as-written, none, ...
    """
    name = text.strip()
    if name in CRASH_SETTINGS:
        return name
    if name in OLD_CRASH_SETTINGS:
        return OLD_CRASH_SETTINGS[name]
    raise argparse.ArgumentTypeError(
        f"got {text!r}; expected one of {', '.join(CRASH_SETTINGS)}")


def crash_setting_note(text: str | None) -> str | None:
    """The deprecation note for an old spelling of a crash setting, else ``None``.

    >>> crash_setting_note("all").split(";")[0]
    "'all' is deprecated: it means all-points (every scenario, even one without a crash block, \
crashes at every point)"
    """
    name = (text or "").strip()
    if name not in OLD_CRASH_SETTINGS:
        return None
    return (f"{name!r} is deprecated: it means {OLD_CRASH_SETTINGS[name]} (every scenario, "
            "even one without a crash block, crashes at every point); say "
            f"{OLD_CRASH_SETTINGS[name]}, or {AS_WRITTEN} for each scenario as its crash "
            "block says")


def with_overrides(scenario: Scenario, *, crash: str | None, seed: int | None) -> Scenario:
    """``scenario`` with its seed and crash selection replaced when asked.

    ``crash`` is a name of :data:`CRASH_SETTINGS` or ``None`` (as-written). ``sample``
    leaves the file's selection as it is: it thins the planned cases (:func:`chosen_cases`).

    >>> from harness.scenario import Scenario
    >>> s = Scenario(name="s", dialect="openai", model=[{"turn": 1, "text": "Hi."}],
    ...              expect={"stop_state": "complete"}, crash={"points": "all"})
    >>> t = with_overrides(s, crash="listed", seed=9)
    >>> t.crash.points, t.seed
    ('none', 9)
    >>> with_overrides(t, crash="all-points", seed=None).crash.points
    'all'
    """
    update: dict[str, object] = {}
    if seed is not None:
        update["seed"] = seed
    points = _crash_points(scenario, crash)
    if points is not None:
        update["crash"] = scenario.crash.model_copy(update={"points": points})
    # model_copy keeps the private source map, so errors and reports still point into the file.
    return scenario.model_copy(update=update) if update else scenario


def _crash_points(scenario: Scenario, crash: str | None) -> object | None:
    """The ``crash.points`` the setting ``crash`` gives ``scenario``; ``None``: as written."""
    if crash in {None, AS_WRITTEN, "sample"}:
        return None
    if crash == "none":
        return "none"
    if crash == "all-points":
        return "all"
    if crash != "listed":
        raise ValueError(f"crash setting {crash!r}: expected one of {', '.join(CRASH_SETTINGS)}")
    return "none" if isinstance(scenario.crash.points, str) else None


def chosen_cases(cases: Sequence[Case], crash: str | None) -> list[Case]:
    """The planned ``cases`` a crash setting keeps: all of them, or under ``sample`` the
    uncrashed case and one case of each kind of crash (:func:`harness.runner.sample_cases`)."""
    if crash != "sample":
        return list(cases)
    from harness.runner import sample_cases

    return sample_cases(cases)


def parse_host(text: str) -> str:
    """A ``--absorb`` value: a host name, without scheme, port or path.

    >>> parse_host("otel.example.com")
    'otel.example.com'
    """
    from harness.scenario import HOST_PATTERN

    return _matching(text, HOST_PATTERN,
                     "a host name such as otel.example.com (no scheme, port or path)")


def _matching(text: str, pattern: str, expected: str) -> str:
    """``text`` when it matches ``pattern`` whole; else the option's got/expected error."""
    import re

    if re.fullmatch(pattern, text) is None:
        raise argparse.ArgumentTypeError(f"got {text!r}; expected {expected}")
    return text


def with_absorbed(scenario: Scenario, hosts: Sequence[str]) -> Scenario:
    """``scenario`` with ``hosts`` added to the ones it answers as telemetry."""
    if not hosts:
        return scenario
    return scenario.model_copy(update={"absorb": list(dict.fromkeys([*scenario.absorb,
                                                                     *hosts]))})


def parse_target(text: str) -> tuple[str, str]:
    """Read ``--target``: ``TOOL=MODULE:FUNCTION``.

    >>> parse_target("mail=mypackage.tools:send_mail")
    ('mail', 'mypackage.tools:send_mail')
    """
    import re

    from harness.scenario import TARGET_PATTERN, TOOL_NAME_PATTERN

    tool, _, spec = text.partition("=")
    if not re.fullmatch(TOOL_NAME_PATTERN, tool) or not re.fullmatch(TARGET_PATTERN, spec):
        raise argparse.ArgumentTypeError(
            f"got {text!r}; expected TOOL=MODULE:FUNCTION, such as "
            "'mail=mypackage.tools:send_mail'")
    return tool, spec


def whole_number(text: str, low: int, high: int | None, expected: str) -> int:
    """``text`` as an int from ``low`` to ``high`` (``None``: no end), else the argparse
    error naming what was ``expected``.

    >>> whole_number("8080", 0, 65535, "a port 0-65535")
    8080
    """
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = low - 1
    if value < low or (high is not None and value > high):
        raise argparse.ArgumentTypeError(got_expected("", got=repr(text), expected=expected))
    return value


def positive_float(text: str, expected: str) -> float:
    """``text`` as a finite number > 0, else the argparse error naming what was ``expected``.

    >>> positive_float("0.5", "a factor > 0")
    0.5
    """
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(got_expected("", got=repr(text), expected=expected))
    return value
