"""A trace rebuilt from its JSON: the way a trace leaves the process that ran the agent.

The agent under test runs in a worker process it may have changed in any way; the
verdicts are given in a process it never ran in. What crosses between them is the
trace as plain JSON (:meth:`Trace.to_json`), never a pickle, which could rebuild any
object the agent chose. :func:`trace_from_json` checks every field against the
record types and rebuilds them: the rebuilt trace has the same canonical JSON, and so
the same digest, as the one the worker held::

    rebuilt = trace_from_json(json.loads(json.dumps(trace.to_json())))
    assert rebuilt.digest == trace.digest
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from harness.trace import _extra, _jobs, _records
from harness.trace._records import Trace

_RECORD_NAMESPACE: dict[str, Any] = {**vars(_extra), **vars(_jobs), **vars(_records)}

_NONE = type(None)


class TraceDataError(ValueError):
    """The data is not a trace: the first field that is wrong, and what it holds."""

    def __init__(self, problem: str, where: str = "") -> None:
        self.problem, self.where = problem, where
        super().__init__(f"{where}: {problem}" if where else problem)

    def inside(self, step: str) -> TraceDataError:
        """The same problem, one step further out (``.field`` or ``[index]``)."""
        return TraceDataError(self.problem, step + self.where)


def trace_from_json(data: object) -> Trace:
    """The :class:`Trace` whose :meth:`Trace.to_json` is ``data``; raises :class:`TraceDataError`.

    Lists become the tuples the records declare; ``dict[str, Any]`` fields (the
    tool arguments, ``extra``) stay the JSON they were.
    """
    try:
        value = _decoder(Trace)(data)
    except TraceDataError as error:
        raise error.inside("trace") from None
    assert isinstance(value, Trace)
    return value


Decoder = Callable[[object], Any]
_DECODERS: dict[Any, Decoder] = {}


def _decoder(kind: Any) -> Decoder:
    """The function that checks and rebuilds data of type ``kind``, built once per type."""
    found = _DECODERS.get(kind)
    if found is None:
        found = _DECODERS[kind] = _build(kind)
    return found


def _build(kind: Any) -> Decoder:
    origin = get_origin(kind)
    if kind is Any:
        return _plain_json
    if origin in (Union, types.UnionType):
        return _union(get_args(kind))
    if origin is Literal:
        return _literal(get_args(kind))
    if origin is tuple:
        args = get_args(kind)
        if len(args) == 2 and args[1] is Ellipsis:
            return _tuple_of(_decoder(args[0]))
        return _fixed_tuple(tuple(_decoder(arg) for arg in args))
    if origin is dict:
        return _dict_of(_decoder(get_args(kind)[1]))
    if isinstance(kind, type) and _is_named_tuple(kind):
        return _named_tuple(kind)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _dataclass(kind)
    if kind in (str, int, float, bool):
        return _scalar(kind)
    raise TypeError(f"{kind!r} is not a type a trace record may declare")


def _union(kinds: tuple[Any, ...]) -> Decoder:
    others = [k for k in kinds if k is not _NONE]
    if len(others) != 1:
        raise TypeError(f"a union of {kinds} is not a type a trace record may declare")
    inner = _decoder(others[0])

    def optional(data: object) -> Any:
        return None if data is None else inner(data)
    return optional


def _literal(allowed: tuple[Any, ...]) -> Decoder:
    def literal(data: object) -> Any:
        if not isinstance(data, str) or data not in allowed:
            raise TraceDataError(f"{_short(data)} is not one of {allowed}")
        return data
    return literal


def _tuple_of(item: Decoder) -> Decoder:
    def tuple_of(data: object) -> tuple[Any, ...]:
        values = _list(data)
        return tuple(_each(values, (item,) * len(values)))
    return tuple_of


def _fixed_tuple(items: tuple[Decoder, ...]) -> Decoder:
    def fixed(data: object) -> tuple[Any, ...]:
        values = _list(data)
        if len(values) != len(items):
            raise TraceDataError(f"{len(values)} item(s) where {len(items)} belong")
        return tuple(_each(values, items))
    return fixed


def _each(values: list[Any], decoders: tuple[Decoder, ...]) -> list[Any]:
    try:
        return [decode(value) for value, decode in zip(values, decoders, strict=True)]
    except TraceDataError as error:  # find the item again, for the path (errors are rare)
        index = next(i for i, (v, d) in enumerate(zip(values, decoders, strict=True))
                     if not _decodes(d, v))
        raise error.inside(f"[{index}]") from None


def _decodes(decode: Decoder, value: object) -> bool:
    try:
        decode(value)
    except TraceDataError:
        return False
    return True


def _dict_of(values: Decoder) -> Decoder:
    def dict_of(data: object) -> dict[str, Any]:
        if not isinstance(data, dict) or not all(isinstance(key, str) for key in data):
            raise TraceDataError(f"{_short(data)} is not a JSON object")
        decoded: dict[str, Any] = {}
        for key, value in data.items():
            try:
                decoded[key] = values(value)
            except TraceDataError as error:
                raise error.inside(f".{key}") from None
        return decoded
    return dict_of


def _named_tuple(kind: type) -> Decoder:
    fixed = _fixed_tuple(tuple(_decoder(hint) for hint in _hints(kind).values()))

    def named(data: object) -> Any:  # serialised as a list, as a tuple is
        return kind(*fixed(data))
    return named


def _dataclass(kind: type) -> Decoder:
    hints = _hints(kind)
    decoders = {name: _decoder(hint) for name, hint in hints.items()}
    required = frozenset(f.name for f in dataclasses.fields(kind)
                         if f.default is dataclasses.MISSING
                         and f.default_factory is dataclasses.MISSING)

    def record(data: object) -> Any:
        if not isinstance(data, dict):
            raise TraceDataError(f"{_short(data)} is not a {kind.__name__} object")
        if not required <= data.keys() or not data.keys() <= decoders.keys():
            raise TraceDataError(_field_problem(kind, data, required, decoders))
        fields: dict[str, Any] = {}
        for name, value in data.items():
            try:
                fields[name] = decoders[name](value)
            except TraceDataError as error:
                raise error.inside(f".{name}") from None
        return kind(**fields)
    return record


def _field_problem(kind: type, data: dict[str, Any], required: frozenset[str],
                   known: dict[str, Decoder]) -> str:
    unknown = sorted(data.keys() - known.keys())
    if unknown:
        return f"{kind.__name__} has no field {unknown[0]!r}"
    return f"{kind.__name__} lacks its field {sorted(required - data.keys())[0]!r}"


def _scalar(kind: type) -> Decoder:
    accepted: tuple[type, ...] = (int, float) if kind is float else (kind,)

    def scalar(data: object) -> Any:
        # An int in a float field stays an int: its JSON, and so the digest, stay the same.
        if isinstance(data, accepted) and (kind is bool or not isinstance(data, bool)):
            return data
        raise TraceDataError(f"{_short(data)} is not a {kind.__name__}")
    return scalar


def _plain_json(data: object) -> Any:
    """JSON as ``json.loads`` gives it; anything else was not sent as JSON."""
    if data is None or isinstance(data, str | int | float | bool):
        return data
    if isinstance(data, list):
        return _each(data, (_plain_json,) * len(data))
    return _plain_object(data)


_plain_object = _dict_of(_plain_json)


def _list(data: object) -> list[Any]:
    if not isinstance(data, list | tuple):
        raise TraceDataError(f"{_short(data)} is not a list")
    return list(data)


def _is_named_tuple(kind: type) -> bool:
    return issubclass(kind, tuple) and hasattr(kind, "_fields")


def _hints(kind: type) -> dict[str, Any]:
    """A record's field types (the records use postponed annotations)."""
    # The records' own modules, not ``kind.__module__``: a record the top-level package
    # hands out says it belongs to ``harness``, whose namespace has no field types.
    hints = get_type_hints(kind, _RECORD_NAMESPACE)
    if dataclasses.is_dataclass(kind):
        names = {f.name for f in dataclasses.fields(kind)}
        return {k: v for k, v in hints.items() if k in names}
    return hints


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
