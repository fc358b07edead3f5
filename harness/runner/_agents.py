"""Find the agent under test from a ``MODULE:ATTRIBUTE`` spec, as ``--agent`` names it.

Two kinds of callable are accepted:

* an **agent factory**, a class or a callable whose first parameter is named
  ``ports`` or annotated ``AgentPorts``: it is given the ports and returns an
  :class:`~harness.ports.Agent` (the full protocol);
* anything else is a **plain entry point**, ``main(prompt: str) -> str`` (sync
  or async), run unchanged by :mod:`harness.intercept`.

    >>> load_agent_factory("harness.agent:ReferenceAgent").__name__
    'ReferenceAgent'
    >>> load_agent_factory("harness.intercept._plain:outcome_of_value")
    PlainEntry(spec='harness.intercept._plain:outcome_of_value', targets=(), tool_map=())
"""

from __future__ import annotations

import errno
import importlib
import inspect
import sys
from collections.abc import Callable, Sequence
from typing import Any, cast

from harness._errors import ConfigError
from harness.intercept import (
    PlainEntry,
    import_from_cwd,
    imported_writing_aside,
    native_clients,
    provider_environment,
)
from harness.ports import AgentFactory
from harness.scenario import Scenario

AGENT_SPEC_FORM = ("MODULE:ATTRIBUTE, such as 'mypackage.agent:main' (a plain main(prompt)) "
                   "or 'harness.agent:ReferenceAgent' (a factory over the ports)")


def load_agent_factory(spec: str, option: str = "--agent") -> AgentFactory | PlainEntry:
    """Import ``MODULE`` and return its ``ATTRIBUTE`` as a factory or a plain entry point.

    ``option`` is where the spec came from, for the error (``ini harness_agent``...).
    ``MODULE`` may be a package in the current folder, as with ``python -m``.
    """
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ConfigError(option, spec, AGENT_SPEC_FORM)
    import_from_cwd()
    before = set(sys.modules)
    try:
        with provider_environment():  # an agent may build its SDK client at import time
            module = imported_writing_aside(lambda: importlib.import_module(module_name))
    except ImportError as error:
        raise ConfigError(option, spec, AGENT_SPEC_FORM,
                          f"Module {module_name!r} cannot be imported: {error}") from error
    except OSError as error:
        if error.errno != errno.EROFS:
            raise ConfigError(option, spec, AGENT_SPEC_FORM, f"Importing {module_name!r} raised "
                              f"{type(error).__name__}: {error}") from error
        raise ConfigError(option, spec, AGENT_IMPORT_WRITES, _written_at_import(
            module_name, error)) from error
    except Exception as error:  # whatever the agent's module does at import time
        raise ConfigError(option, spec, AGENT_SPEC_FORM,
                          f"Importing {module_name!r} raised {type(error).__name__}: "
                          f"{error}") from error
    escapes = native_clients(set(sys.modules) - before)
    if escapes:
        raise ConfigError(option, spec, "an agent whose network calls the harness can see",
                          f"importing {module_name!r} loaded " + "; ".join(escapes))
    found: Any = module
    for part in attribute.split("."):
        found = getattr(found, part, None)
    if not callable(found):
        raise ConfigError(option, spec, AGENT_SPEC_FORM,
                          _missing_callable(module, module_name, attribute))
    if is_factory(found):
        return cast(AgentFactory, found)
    return PlainEntry(spec)


AGENT_IMPORT_WRITES = "an agent whose import writes no file on the real disk"


def _written_at_import(module_name: str, error: OSError) -> str:
    """Why an import that wrote a file failed here, and what lets it run (a library that
    makes its data folders when imported: CrewAI's ``~/.local/share/crewai``)."""
    return (f"importing {module_name!r} wrote {error.filename!r} and was refused "
            f"({error.strerror}): an agent's modules are imported before its case's files "
            "are in place, where the harness keeps the real disk read-only (its processes "
            "are sealed; see 'What is real in a case' in the README). A library that makes "
            "its folders or files when it is imported finds them if they are there: import "
            "the agent once outside the harness, then run it again")


def _missing_callable(module: Any, module_name: str, attribute: str) -> str:
    """What the module offers instead: its own callables first, with a "did you mean"."""
    from harness.scenario import did_you_mean

    own = sorted(name for name, value in vars(module).items()
                 if callable(value) and not name.startswith("_")
                 and _defined_in(getattr(value, "__module__", None), module_name))
    public = own or sorted(name for name in vars(module) if not name.startswith("_"))
    guess = did_you_mean(attribute, own)
    return (f"{module_name} has no callable {attribute!r}; "
            f"{'its own callables are' if own else 'it has'}: {', '.join(public[:12])}"
            + (f". {guess}" if guess else ""))


def _defined_in(defining: object, module_name: str) -> bool:
    """Whether code of ``defining`` is ``module_name``'s own (its submodules too)."""
    return isinstance(defining, str) and (
        defining == module_name or defining.startswith(module_name + "."))


def agent_under_test(agent: Callable[..., Any]) -> AgentFactory | PlainEntry:
    """A callable given in Python (the pytest hook): a factory, or a plain entry by its name.

    A plain entry is imported afresh by name for each incarnation, so a lambda
    or a function defined inside another one can only be a factory.
    """
    if is_factory(agent) or "<" in agent.__qualname__:
        return cast(AgentFactory, agent)
    return PlainEntry(f"{agent.__module__}:{agent.__qualname__}")


def is_factory(agent: Callable[..., Any]) -> bool:
    """Whether ``agent`` takes the ports (a class, or first parameter ``ports: AgentPorts``)."""
    if inspect.isclass(agent):
        return True
    try:
        parameters = list(inspect.signature(agent).parameters.values())
    except (TypeError, ValueError):
        return False
    if not parameters:
        return False
    first = parameters[0]
    annotation = first.annotation
    named = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return first.name == "ports" or named.endswith("AgentPorts")


def dialect_skip(scenario: Scenario, agent: AgentFactory | PlainEntry | None,
                 declared: Sequence[str] = ()) -> str | None:
    """Why ``scenario`` is skipped for ``agent``, or None when the agent speaks its dialect.

    The dialects come from ``declared`` (``--dialect``, ini ``harness_dialects``),
    else from a ``dialects`` attribute on the agent's callable; an agent that
    declares none is run on every scenario.
    """
    dialects = tuple(declared) or _declared_dialects(agent)
    if not dialects or scenario.dialect in dialects:
        return None
    return (f"this scenario speaks {scenario.dialect}; the agent speaks "
            f"{', '.join(dialects)} only")


def _declared_dialects(agent: AgentFactory | PlainEntry | None) -> tuple[str, ...]:
    if agent is None:
        return ()
    if isinstance(agent, PlainEntry):
        with provider_environment():
            found = getattr(agent.load(), "dialects", ())
    else:
        found = getattr(agent, "dialects", ())
    if isinstance(found, str):
        return (found,)
    return tuple(str(d) for d in found) if isinstance(found, list | tuple | set | frozenset) else ()
