"""The openai SDK's request-parameter walk, skipped where it cannot change anything.

Before every request the ``openai`` SDK walks the call's parameters against their
``TypedDict`` types (``_transform_recursive``): a key whose field is ``Annotated`` with
``PropertyInfo(alias=...)`` is renamed, a date or a file is formatted, a pydantic model
is dumped, an omitted value is dropped, an iterable becomes a list. The walk tries every
member of a union on every item: for an OpenAI Agents SDK request (a Responses ``input``
of a dozen items, each tried against some twenty item types) it was a third of the
agent's CPU in a case, for every request of every incarnation.

On JSON data (``dict`` with ``str`` keys, ``list``, ``str``, ``int``, ``float``,
``bool``, ``None``: nothing to format, dump, drop or turn into a list) the walk can only
rename keys, and only where an alias is reachable in the type. While an incarnation
runs, each node of the walk whose type reaches no alias (worked out once per type, by
walking the type, not the data) and whose data is JSON is answered with a copy of the
data (new dicts and lists, the same key order): what the SDK's walk returns, equal
value for value, so the request's bytes are the same. Every other node is the SDK's own
walk, whose children come back here.
"""

from __future__ import annotations

import sys
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

# The SDK's walk, by module: (the sync walk's name, the async walk's name). SDKs
# generated alike have the same module; the anthropic SDK installed here has none.
_WALKS: Final = {
    "openai._utils._transform": ("_transform_recursive", "_async_transform_recursive"),
}
_JSON_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
# typing_extensions re-exports this very object on the Pythons supported.
_LITERALS: Final = frozenset({typing.Literal})


class NotJson(Exception):
    """Raised out of :func:`json_copy`: the data holds a value the SDK's walk may change."""


def json_copy(data: object) -> object:
    """``data`` copied, new dicts and lists throughout; :class:`NotJson` if it is not JSON.

    >>> json_copy({"a": [1, {"b": None}]})
    {'a': [1, {'b': None}]}
    """
    kind = type(data)
    if kind in _JSON_SCALARS:
        return data
    if kind is list:
        return [json_copy(item) for item in typing.cast(list[object], data)]
    if kind is dict:
        copied: dict[str, object] = {}
        for key, value in typing.cast(dict[object, object], data).items():
            if type(key) is not str:
                raise NotJson
            copied[key] = json_copy(value)
        return copied
    raise NotJson


class _AliasFree:
    """Whether a type reaches no ``PropertyInfo`` alias, per type, for one SDK module."""

    def __init__(self, module: Any) -> None:
        self._property_info = module.PropertyInfo
        self._is_typeddict = module.is_typeddict
        # By id, the type kept beside its answer: typing objects hash slowly.
        self._known: dict[int, tuple[object, bool]] = {}

    def __call__(self, annotation: object) -> bool:
        known = self._known.get(id(annotation))
        if known is None:
            known = self._known[id(annotation)] = (annotation, self._reaches_none(annotation))
        return known[1]

    def _reaches_none(self, annotation: object) -> bool:
        """Walk the type (not the data): every member, field, item and argument of it.

        Anything this cannot read (a forward reference left unresolved, a type
        variable, hints that do not resolve) counts as reaching an alias: the SDK's
        own walk then runs, as before.
        """
        seen: set[int] = set()
        todo = [annotation]
        while todo:
            current = todo.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            if isinstance(current, (str, typing.ForwardRef, typing.TypeVar)):
                return False
            if isinstance(current, self._property_info):
                if current.alias is not None:
                    return False
                continue
            if typing.get_origin(current) in _LITERALS:
                continue  # its arguments are values, not types
            if isinstance(current, type) and self._is_typeddict(current):
                try:
                    hints = typing.get_type_hints(current, include_extras=True)
                except Exception:  # any failure: not provably alias-free
                    return False
                todo.extend(hints.values())
            # Union members, item types, Required[T], and Annotated[T, ...]'s T and metadata.
            todo.extend(typing.get_args(current))
        return True


def _fast_walk(walk: Callable[..., Any], alias_free: _AliasFree) -> Callable[..., Any]:
    def fast(data: object, *, annotation: Any, inner_type: Any = None) -> Any:
        if alias_free(annotation) and (inner_type is None or alias_free(inner_type)):
            try:
                return json_copy(data)
            except NotJson:
                pass
        return walk(data, annotation=annotation, inner_type=inner_type)

    return fast


def _fast_async_walk(walk: Callable[..., Any], alias_free: _AliasFree) -> Callable[..., Any]:
    async def fast(data: object, *, annotation: Any, inner_type: Any = None) -> Any:
        if alias_free(annotation) and (inner_type is None or alias_free(inner_type)):
            try:
                return json_copy(data)
            except NotJson:
                pass
        return await walk(data, annotation=annotation, inner_type=inner_type)

    return fast


# One checker per SDK module object: its answers hold for the process.
_CHECKERS: dict[int, tuple[object, _AliasFree]] = {}


def _checker(module: Any) -> _AliasFree | None:
    known = _CHECKERS.get(id(module))
    if known is None:
        if not hasattr(module, "PropertyInfo") or not hasattr(module, "is_typeddict"):
            return None
        known = _CHECKERS[id(module)] = (module, _AliasFree(module))
    return known[1]


@contextmanager
def sdk_params_walked_cheaply() -> Iterator[None]:
    """While an incarnation runs, the loaded SDK's parameter walk skips what cannot change.

    An SDK first imported during the incarnation is not patched: the next one finds it.
    """
    saved: list[tuple[Any, str, Any]] = []
    for name, (sync_name, async_name) in _WALKS.items():
        module = sys.modules.get(name)
        alias_free = None if module is None else _checker(module)
        if alias_free is None:
            continue
        for attribute, wrap in ((sync_name, _fast_walk), (async_name, _fast_async_walk)):
            walk = getattr(module, attribute, None)
            if callable(walk):
                saved.append((module, attribute, walk))
                setattr(module, attribute, wrap(walk, alias_free))
    try:
        yield
    finally:
        for module, attribute, walk in reversed(saved):
            setattr(module, attribute, walk)
