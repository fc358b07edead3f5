"""What a framework derives from a tool function: derived once per worker, not per incarnation.

Frameworks turn each tool function into a schema built of pydantic models: LangGraph's
``ToolNode`` (through ``langchain_core``'s ``create_schema_from_function``) and the
OpenAI Agents SDK's ``function_tool`` (through ``function_schema``) read the
function's signature, docstring and type hints and build two models per tool. An
agent's own modules are imported afresh for every incarnation, so each incarnation
hands its framework new functions, the harness's stand-ins
(:mod:`harness.intercept._targets`) and the agent's own tools alike, and the
framework builds the same models again: a fifth of a LangGraph restart, and 5 ms per
tool of an OpenAI Agents one.

While an incarnation runs, these derivations are memoized, keyed by everything the
schema is made of: the function's code, names, docstring, defaults and resolved type
hints (for a stand-in, those of the function it replaces), and the call's other
arguments. Code objects compare by value, so the same function imported again has the
same key. A type hint or default that is an object of the agent's own package is a
new object every incarnation, so its key never matches: a schema never refers to a
class of a dead incarnation. A function whose signature is not its code's own (a
wrapper with ``__wrapped__``, one with ``__signature__``, a closure) is derived anew
every time. What is handed out has dicts and lists of its own (a model class is shared
as it is), so a framework that edits the schema it was given edits only its own.

LlamaIndex's workflows (``llama-index-workflows``) find a workflow's steps with
``inspect.getmembers`` over the instance: every attribute of a pydantic agent read, for
every step the workflow runs (seven a run of a ``FunctionAgent``), a twentieth of a
LlamaIndex case. Which names are steps is a matter of the class alone; for the
framework's own classes (every class of the instance's MRO is the framework's or
pydantic's: imported once per worker, never the agent's) it is worked out once, per
class, held by a weak reference to the class and as names only. Each lookup still
reads those names on the instance, and any bound method the instance holds itself, and
keeps what is a bound step, as ``getmembers`` does; a class whose attributes were added
or removed since is looked at anew. A class of the agent's own (a workflow subclass,
new every incarnation) is looked at in full every time, as the framework does.

A framework is imported once per worker, so what it builds lazily and keeps in the
process would outlive the incarnation that built it, and reach the next case: DSPy's
LM cache (``dspy.cache``, in memory and on disk under ``~/.dspy_cache``, on by default
and built on the first call) answered a later case's requests from an earlier one's,
without a request. A process of its own starts without it; so does each incarnation
here (:func:`process_state_dropped`): the framework builds it again inside the case,
its disk part on the case's disk. CrewAI keeps the path of its version-check cache
(``crewai_core.version._get_cache_file``, an ``lru_cache`` that makes
``~/.cache/crewai`` on its first call): only the first case of a worker made that
folder on its disk, and ``--check-determinism`` failed the case. A memo like it is
cleared, not dropped. DBOS keeps one launched instance for the process
(``DBOS(config)`` hands back the one there is, ``launch()`` of a launched one only
warns), with its threads and its engine on the system database: the next case's
agent found an earlier case's, on that case's database ("no such table:
workflow_status"). A process's end shuts it down, and so does each incarnation's
here (:data:`PROCESS_ENDS`: ``DBOS.destroy(destroy_registry=True)``, which stops its
threads and forgets its registered workflows, registered again by the next import).
"""

from __future__ import annotations

import copy
import inspect
import sys
import threading
import types
import typing
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

from harness.intercept._targets import replaced_function


@dataclass(frozen=True)
class _Derivation:
    """Where a framework derives a schema: from a tool function, or from a schema made here."""

    module: str
    attribute: str
    position: int  # of the argument it is derived from, among the positional ones
    keyword: str  # of the same argument, passed by name
    from_schema: bool = False  # derived from a schema handed out here, not from a stand-in


_DERIVATIONS: Final = (
    _Derivation("langchain_core.tools.structured", "create_schema_from_function", 1, "func"),
    _Derivation("langchain_core.tools.base", "create_schema_from_function", 1, "func"),
    # A tool's schema for the model (``tool_call_schema``, bound to the chat model on
    # every ``create_react_agent``): a subset of the schema above.
    _Derivation("langchain_core.tools.base", "_create_subset_model", 1, "model",
                from_schema=True),
    _Derivation("agents.tool", "function_schema", 0, "func"),
    # A ``FunctionTool``'s argument model, on every ``FunctionAgent`` built.
    _Derivation("llama_index.core.tools.function_tool", "create_schema_from_function", 1,
                "func"),
)
# Schemas kept per process: a few tools per scenario, for the few scenarios a worker runs.
_KEPT: Final = 256
_SCHEMAS: OrderedDict[tuple[object, ...], Any] = OrderedDict()
_LOCK = threading.Lock()
# The model classes handed out from _SCHEMAS: what a from_schema derivation is keyed on.
_HANDED: weakref.WeakSet[type] = weakref.WeakSet()


# Where workflows look a workflow's steps up: (module, attribute).
_STEP_FINDERS: Final = (("workflows.workflow", "get_steps_from_instance"),)
# The packages whose classes are the framework's: imported once per worker.
_FRAMEWORK_PACKAGES: Final = frozenset({"workflows", "llama_index", "pydantic", "abc",
                                        "builtins"})
# Per framework class: the sizes of its MRO's namespaces when looked at, and the names
# of its steps. Names only, and a weak key: nothing here holds a class alive.
_STEP_NAMES: weakref.WeakKeyDictionary[type, tuple[tuple[int, ...], tuple[str, ...]]] = \
    weakref.WeakKeyDictionary()


#: (module, attribute) a framework builds on first use and keeps for the process.
PROCESS_STATE: Final = (("dspy", "cache"), ("crewai_core.version", "_get_cache_file"))
#: (module, what it holds for the process, class, method): what shuts down a framework's
#: process-wide instance, with its threads, engine and registry, called with
#: ``destroy_registry=True`` while the module holds any of it (a worker's later cases,
#: which never made one, are not told it was shut down).
PROCESS_ENDS: Final = (
    ("dbos._dbos", ("_dbos_global_instance", "_dbos_global_registry"), "DBOS", "destroy"),
)


@contextmanager
def process_state_dropped() -> Iterator[None]:
    """Drop :data:`PROCESS_STATE` before and after an incarnation (see the module docstring).

    >>> fake = types.ModuleType("dspy")
    >>> fake.cache = "an earlier case's"
    >>> sys.modules["dspy"] = fake
    >>> with process_state_dropped():
    ...     hasattr(fake, "cache")
    False
    >>> del sys.modules["dspy"]
    """
    _drop_process_state()
    try:
        yield
    finally:
        _drop_process_state()


def _drop_process_state() -> None:
    for name, held, owner, method in PROCESS_ENDS:
        module = sys.modules.get(name)
        if module is None or all(vars(module).get(attribute) is None for attribute in held):
            continue
        end = getattr(getattr(module, owner, None), method, None)
        if callable(end):
            end(destroy_registry=True)
    for name, attribute in PROCESS_STATE:
        module = sys.modules.get(name)
        if module is None:
            continue
        kept = vars(module).get(attribute)
        clear = getattr(kept, "cache_clear", None)
        if callable(clear):  # a memoized function: the function stays, its memo goes
            clear()
        else:
            vars(module).pop(attribute, None)


@contextmanager
def steps_found_once() -> Iterator[None]:
    """Look up the steps of a framework's workflow class once per worker, where imported."""
    saved: list[tuple[Any, str, Any]] = []
    for name, attribute in _STEP_FINDERS:
        module = sys.modules.get(name)
        find = getattr(module, attribute, None)
        if module is None or not callable(find):
            continue
        saved.append((module, attribute, find))
        setattr(module, attribute, _steps_memoized(find))
    try:
        yield
    finally:
        for module, attribute, find in reversed(saved):
            setattr(module, attribute, find)


def _steps_memoized(find: Callable[[object], dict[str, Any]]) -> Callable[[object], Any]:
    def found(workflow: object) -> dict[str, Any]:
        cls = type(workflow)
        if not _framework_owned(cls):
            return find(workflow)
        shape = tuple(len(c.__dict__) for c in cls.__mro__)
        with _LOCK:
            known = _STEP_NAMES.get(cls)
        if known is None or known[0] != shape:
            known = (shape, _step_names(cls))
            with _LOCK:
                _STEP_NAMES[cls] = known
        own = getattr(workflow, "__dict__", {})
        names = set(known[1]) | {n for n, v in own.items() if inspect.ismethod(v)}
        steps: dict[str, Any] = {}
        for name in sorted(names):
            try:
                value = getattr(workflow, name)
            except AttributeError:
                continue
            if inspect.ismethod(value) and hasattr(value, "_step_config"):
                steps[name] = value
        return steps

    return found


_PLAIN_DIR: Final = object.__dir__
_PLAIN_GETATTRIBUTE: Final = object.__getattribute__


def _framework_owned(cls: type) -> bool:
    """Whether every class of ``cls``'s MRO is the framework's, its attributes plainly found.

    A class with a ``__dir__`` or ``__getattribute__`` of its own may answer anything.
    """
    return all(c.__module__.split(".")[0] in _FRAMEWORK_PACKAGES for c in cls.__mro__) \
        and getattr(cls, "__dir__", None) is _PLAIN_DIR \
        and getattr(cls, "__getattribute__", None) is _PLAIN_GETATTRIBUTE


def _step_names(cls: type) -> tuple[str, ...]:
    """The names under which ``cls`` has a step: a function (or bound method) carrying a
    step's configuration, read on the class, where a property is not called."""
    return tuple(name for name, value in inspect.getmembers(cls)
                 if (inspect.isfunction(value) or inspect.ismethod(value))
                 and hasattr(value, "_step_config"))


@contextmanager
def schemas_derived_once() -> Iterator[None]:
    """Memoize the frameworks' schema derivations of tool functions, where they are imported.

    A framework first imported during this incarnation is not patched: its next
    incarnation finds it imported.
    """
    saved: list[tuple[Any, str, Any]] = []
    for derivation in _DERIVATIONS:
        module = sys.modules.get(derivation.module)
        derive = getattr(module, derivation.attribute, None)
        if module is None or not callable(derive):
            continue
        saved.append((module, derivation.attribute, derive))
        setattr(module, derivation.attribute, _memoized(derive, derivation))
    try:
        yield
    finally:
        for module, attribute, derive in reversed(saved):
            setattr(module, attribute, derive)


def _memoized(derive: Callable[..., Any], derivation: _Derivation) -> Callable[..., Any]:
    position, keyword = derivation.position, derivation.keyword
    keyed = _key_of_schema if derivation.from_schema else _key_of_function

    def memoized(*args: Any, **kwargs: Any) -> Any:
        source = args[position] if len(args) > position else kwargs.get(keyword)
        others = args[:position] + args[position + 1:]
        key = keyed(derive, source, others, {k: v for k, v in kwargs.items() if k != keyword})
        if key is None:
            return derive(*args, **kwargs)
        with _LOCK:
            schema = _SCHEMAS.get(key)
            if schema is not None:
                _SCHEMAS.move_to_end(key)
        if schema is None:
            schema = derive(*args, **kwargs)
            with _LOCK:
                _SCHEMAS[key] = schema
                if isinstance(schema, type):
                    _HANDED.add(schema)
                while len(_SCHEMAS) > _KEPT:
                    _SCHEMAS.popitem(last=False)
        return _handed_out(schema)

    return memoized


def _handed_out(schema: Any) -> Any:
    """What one caller gets of a kept schema: its own dicts and lists, the rest shared.

    A model class is shared as it is; an object holding a JSON schema (the OpenAI
    Agents SDK's ``FuncSchema``) is copied with its dicts and lists, while what it
    holds besides (a signature whose defaults are the user's own objects) stays as
    the framework made it.
    """
    if isinstance(schema, type):
        return schema
    if isinstance(schema, (dict, list)):
        return copy.deepcopy(schema)
    own = copy.copy(schema)
    for name, value in list(getattr(own, "__dict__", {}).items()):
        if isinstance(value, (dict, list)):
            object.__setattr__(own, name, copy.deepcopy(value))
    return own


def _key_of_schema(derive: Callable[..., Any], schema: object, others: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> tuple[object, ...] | None:
    """What a schema derived from a schema handed out here is made of, or None."""
    if not isinstance(schema, type) or schema not in _HANDED:
        return None
    try:
        key = (derive, schema, _frozen(others), _frozen(sorted(kwargs.items())))
        hash(key)
    except TypeError:  # an argument that cannot be keyed: derived anew
        return None
    return key


def _key_of_function(derive: Callable[..., Any], function: object, others: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> tuple[object, ...] | None:
    """What the schema of a tool function is made of, or None (derived anew every time)."""
    original: Any = replaced_function(function)
    kind = "stand-in"
    if original is None and _plainly_made(function):
        original, kind = function, "own"
    code = getattr(original, "__code__", None)
    if original is None or code is None:
        return None
    try:
        hints = typing.get_type_hints(original, include_extras=True)
        key = (derive, kind, code, code.co_filename, original.__module__, original.__name__,
               original.__qualname__, original.__doc__, original.__defaults__,
               original.__kwdefaults__, tuple(hints.items()), _frozen(others),
               _frozen(sorted(kwargs.items())))
        hash(key)
    except Exception:  # hints that do not resolve, an unhashable default: derived anew
        return None
    return key


def _plainly_made(function: object) -> bool:
    """Whether ``function``'s signature is its code's alone, as a ``def`` at module level makes it.

    ``inspect.signature`` follows ``__wrapped__`` and ``__signature__``, which the key
    does not hold; a closure's cells may be what a framework reads.
    """
    return (isinstance(function, types.FunctionType) and function.__closure__ is None
            and not hasattr(function, "__wrapped__") and not hasattr(function, "__signature__"))


def _frozen(value: Any) -> Any:
    """``value`` with its lists as tuples and its dicts as sorted pairs, so that it hashes."""
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(item) for item in value)
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _frozen(v)) for k, v in value.items())))
    return value
