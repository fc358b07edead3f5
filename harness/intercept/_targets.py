"""The user's tool functions, replaced by the scenario's counting tools (DESIGN §4).

A scenario tool may name the function of the agent's code that it stands for::

    tools:
      mail: {kind: send, target: "mypackage.tools:send_mail"}

While an incarnation runs, ``mypackage.tools.send_mail`` is a stand-in with the
same signature (sync or async, like the original) that runs the counting tool
``mail``: the ledger records the side effect, the scenario's behaviour (slow,
failing, hanging…) applies, and the user's real function is never called. The
stand-in returns the counting tool's result (a JSON object).

The module is patched before the agent's own modules are imported afresh, so
``from mypackage.tools import send_mail`` in the agent binds the stand-in too.

The call's arguments are the parameters the agent passed, by name (positional
ones are named from the original's signature, defaults are not filled in), so
the scenario's scripted calls should use the function's parameter names.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import sys
import weakref
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from harness._errors import AgentEntryError

ToolCaller = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Runs the scenario tool ``name`` with the given arguments (async)."""
BlockingToolCaller = Callable[[str, dict[str, Any]], Any]
"""The same, for a stand-in called from blocking code."""


class NamedByModule:
    """Something named ``module:attribute`` by its ``spec``."""

    spec: str

    @property
    def module(self) -> str:
        return self.spec.partition(":")[0]

    @property
    def attribute(self) -> str:
        return self.spec.partition(":")[2]


@dataclass(frozen=True)
class Target(NamedByModule):
    """A scenario tool and the user's function it replaces: ``module:attribute``."""

    tool: str
    spec: str


@contextmanager
def replaced_targets(targets: tuple[Target, ...], call: ToolCaller,
                     call_blocking: BlockingToolCaller) -> Iterator[None]:
    """Replace every target by its counting stand-in for the duration."""
    saved: list[tuple[Any, str, Any]] = []
    try:
        for target in targets:
            owner, name, original = _resolve(target)
            saved.append((owner, name, original))
            setattr(owner, name, stand_in(target.tool, original, call, call_blocking))
        yield
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)


def missing_function(spec: str) -> str | None:
    """Why ``module:function`` cannot be had (imported and found callable), or None."""
    try:
        _resolve(Target("?", spec))
    except AgentEntryError as error:
        return str(error).partition(": ")[2].partition(": ")[2]
    return None


def refused_arguments(spec: str, args: Mapping[str, Any]) -> str | None:
    """Why ``module:function`` cannot be called with ``args`` by name, or None.

    The stand-in takes exactly what the function takes, so a scripted call whose
    argument names the function does not have fails in the case with a ``TypeError``;
    binding them to the signature finds it before any case runs.

    >>> refused_arguments("shlex:quote", {"text": "a b"})
    "missing a required argument: 's' (the function is quote(s))"
    """
    try:
        _, name, function = _resolve(Target("?", spec))
    except AgentEntryError:
        return None  # reported as a target that cannot be had
    signature = _signature(function)
    if signature is None:
        return None
    try:
        signature.bind(**args)
    except TypeError as error:
        return f"{error} (the function is {name}{signature})"
    return None


def called_from_blocking_code(target: Target) -> bool:
    """Whether ``target`` names a plain (not async) function: its stand-in runs with no loop.

    A target that cannot be had is not: the run reports it before any case.
    """
    try:
        return not inspect.iscoroutinefunction(_resolve(target)[2])
    except AgentEntryError:
        return False


def import_from_cwd() -> None:
    """Make the current folder importable, as ``python -m`` does, if it is not already.

    A spec such as ``mypackage.agent:main`` names a package beside the user, not one
    installed; the ``harness`` script's own folder is what ``sys.path`` starts with.
    Worker processes call this too: they inherit the folder, not the change to the path.
    """
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)


def _resolve(target: Target) -> tuple[Any, str, Any]:
    import_from_cwd()
    try:
        owner: Any = importlib.import_module(target.module)
    except Exception as error:  # whatever the module does at import time
        raise AgentEntryError(f"tool {target.tool!r}: target {target.spec!r}: cannot import "
                              f"{target.module!r} ({type(error).__name__}: {error})") from error
    *path, name = target.attribute.split(".")
    for part in path:
        owner = getattr(owner, part)
    original = getattr(owner, name, None)
    if not callable(original):
        raise AgentEntryError(f"tool {target.tool!r}: target {target.spec!r}: {target.module!r} "
                          f"has no function {target.attribute!r}")
    return owner, name, original


# Each stand-in made, and the function it replaces (see replaced_function).
_REPLACED: weakref.WeakKeyDictionary[Callable[..., Any], Callable[..., Any]] = \
    weakref.WeakKeyDictionary()


def replaced_function(function: object) -> Callable[..., Any] | None:
    """The user's function that ``function`` stands in for, or None if it is no stand-in."""
    if not callable(function):
        return None
    try:
        return _REPLACED.get(function)
    except TypeError:  # not weakly referable: not a function of ours
        return None


def stand_in(tool: str, original: Callable[..., Any], call: ToolCaller,
             call_blocking: BlockingToolCaller) -> Callable[..., Any]:
    """A function shaped like ``original`` that runs the counting tool ``tool`` instead."""
    made = _made_stand_in(tool, original, call, call_blocking)
    _REPLACED[made] = original
    return made


def _made_stand_in(tool: str, original: Callable[..., Any], call: ToolCaller,
                   call_blocking: BlockingToolCaller) -> Callable[..., Any]:
    signature = _signature(original)

    def arguments(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        # A call the real function would refuse (a required argument missing, one too
        # many) raises the TypeError Python raises before its body runs: nothing is sent.
        try:
            return _named_arguments(signature, args, kwargs)
        except TypeError as error:
            name = getattr(original, "__name__", tool)
            raise TypeError(f"{name}() {error}") from None

    if inspect.iscoroutinefunction(original):
        @functools.wraps(original)
        async def counted(*args: Any, **kwargs: Any) -> Any:
            return await call(tool, arguments(args, kwargs))

        return counted

    @functools.wraps(original)
    def counted_blocking(*args: Any, **kwargs: Any) -> Any:
        return call_blocking(tool, arguments(args, kwargs))

    return counted_blocking


def _signature(function: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(function)
    except (TypeError, ValueError):
        return None


def _named_arguments(signature: inspect.Signature | None, args: tuple[Any, ...],
                     kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The call's arguments by parameter name; ``**kwargs`` are spread out.

    >>> def send(to, body, **extra): ...
    >>> _named_arguments(inspect.signature(send), ("a@b",), {"body": "hi", "cc": "c"})
    {'to': 'a@b', 'body': 'hi', 'cc': 'c'}
    """
    if signature is None:
        return dict(kwargs)
    bound = signature.bind(*args, **kwargs)
    named: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            named.update(value)
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            named[name] = list(value)
        else:
            named[name] = value
    return named
