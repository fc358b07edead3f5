"""Turn pydantic's validation errors into located, readable :class:`ScenarioError`\\ s.

Pydantic reports a location such as ``("faults", 0, "stall", "seconds")``: the
path through the data with union tags mixed in. Walking it beside the YAML data
gives the document location (tags dropped) and so ``file:line:col``; walking it
beside the model types gives what was expected there. Every error type gets a
sentence of its own; the rest fall back to pydantic's words, still located::

    s.yaml:3:1: scenario: unknown key: got 'descripton'; expected one of 'name',
    'description', …. Did you mean 'description'?
"""

from __future__ import annotations

import types
from collections.abc import Iterable
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from harness._errors import ScenarioError
from harness.scenario._faults import FAULT_KINDS
from harness.scenario._model import Scenario
from harness.scenario._names import PATTERN_MEANINGS
from harness.scenario._problems import (
    Loc,
    Problem,
    ScenarioProblems,
    did_you_mean,
    plural,
    quoted,
    show,
    show_typed,
)
from harness.scenario._source import SourceMap
from harness.scenario._tools import BEHAVIOUR_KINDS


def scenario_errors(exc: ValidationError, data: object, source: SourceMap) -> list[ScenarioError]:
    """Every error in ``exc``, located in ``source`` and sorted by position."""
    return located_details(exc.errors(include_url=False), data, source)


def located_details(details: Iterable[ErrorDetails], data: object, source: SourceMap
                    ) -> list[ScenarioError]:
    """:func:`scenario_errors` of some of a validation's error details."""
    errors = [
        source.error(problem, within)
        for detail in _one_per_union(details)
        for within, problem in _problems(detail, data)
    ]
    return sorted(errors, key=lambda error: (error.line or 0, error.column or 0))


def _one_per_union(details: Iterable[ErrorDetails]) -> list[ErrorDetails]:
    """One error per value of a plain union (``int | str``), not one per member.

    Pydantic reports a value no member takes once for each member, at a location that
    ends in the member's name (``("retry_after", "constrained-int")``). When the value
    has a member's type and broke only its bound or rule, that member's errors stand;
    otherwise it is one type error at the union's own location, which names every member.
    """
    out: list[ErrorDetails] = []
    members: dict[Loc, list[ErrorDetails]] = {}
    for detail in details:
        loc = tuple(detail["loc"])
        if loc and isinstance(loc[-1], str) and _is_plain_union(loc[:-1]):
            if loc[:-1] not in members:
                out.append(detail)  # holds the union's place in the order
            members.setdefault(loc[:-1], []).append(detail)
        else:
            out.append(detail)
    merged: list[ErrorDetails] = []
    for detail in out:
        loc = tuple(detail["loc"])
        group = members.get(loc[:-1]) if loc else None
        if group is None or detail is not group[0]:
            merged.append(detail)
            continue
        specific = [d for d in group if not _is_type_error(d["type"])]
        merged.extend(specific or [{**group[0], "loc": loc[:-1]}])
    return merged


def _is_plain_union(loc: Loc) -> bool:
    annotation, _ = resolve(loc)
    return get_origin(annotation) in (Union, types.UnionType) and not _union_tags(annotation)


def _is_type_error(kind: str) -> bool:
    return kind.endswith(("_type", "_parsing"))


def _problems(detail: ErrorDetails, data: object) -> list[tuple[Loc, Problem]]:
    loc = tuple(detail["loc"])
    where = document_loc(loc, data)
    error = detail.get("ctx", {}).get("error")
    if isinstance(error, ScenarioProblems):
        return [(where, problem) for problem in error.problems]
    return [((), _describe_error(detail, loc, where))]


def document_loc(loc: Loc, data: object) -> Loc:
    """Pydantic's ``loc`` without the union tags and validator names it inserts.

    >>> document_loc(("faults", 0, "stall", "seconds"), {"faults": [{"kind": "stall"}]})
    ('faults', 0, 'seconds')
    """
    out: list[str | int] = []
    node = data
    for index, part in enumerate(loc):
        is_last = index == len(loc) - 1
        if _is_tag(node, part):
            continue
        if _has_child(node, part):
            out.append(part)
            node = node[part]  # type: ignore[index]
        elif is_last and isinstance(node, dict) and part != "[key]":
            out.append(part)  # a missing key: the position falls back to its mapping
    return tuple(out)


def _has_child(node: object, part: str | int) -> bool:
    if isinstance(node, dict):
        return part in node
    return isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)


def _is_tag(node: object, part: object) -> bool:
    # Pydantic names the union member it chose after the mapping: ("faults", 0, "stall").
    return isinstance(node, dict) and node.get("kind") == part


def _describe_error(detail: ErrorDetails, loc: Loc, where: Loc) -> Problem:
    kind = detail["type"]
    value = detail["input"]
    ctx = detail.get("ctx", {})
    if kind == "extra_forbidden":
        return _unknown_key(loc, where)
    if kind in ("missing", "union_tag_not_found"):
        return _missing(loc, where, tag=kind == "union_tag_not_found")
    if kind == "union_tag_invalid":
        # ctx["tag"] is the tag turned into text; the input holds what was written.
        tag = value.get("kind", ctx["tag"]) if isinstance(value, dict) else ctx["tag"]
        return _unknown_kind(loc, where, tag)
    if kind == "literal_error":
        allowed = _literal_values(loc)
        return Problem(where, "not an allowed value", value, show(value), quoted(allowed),
                       did_you_mean(value, [str(a) for a in allowed]))
    if kind in _BOUNDS:
        symbol, key = _BOUNDS[kind]
        return Problem(where, "out of range", value, show(value),
                       f"{_bounded_noun(loc, value)} {symbol} {_bound(ctx[key])}")
    if kind in _LENGTHS:
        return _length(kind, where, value, ctx)
    return _other(detail, loc, where)


def _other(detail: ErrorDetails, loc: Loc, where: Loc) -> Problem:
    kind = detail["type"]
    value = detail["input"]
    if kind == "string_pattern_mismatch":
        pattern = str(detail.get("ctx", {})["pattern"])
        return Problem(where, "badly formed", value, show(value),
                       PATTERN_MEANINGS.get(pattern, f"text matching {pattern}"))
    if kind == "finite_number":
        return Problem(where, "not a finite number", value, show(value), "a finite number")
    if kind == "invalid_key":
        return Problem((*where, str(value)), "a key is not text", value, show(value),
                       "keys that are plain text", at_key=True)
    if kind == "invalid-json-value":
        return Problem(where, "not a JSON value", value, show_typed(value),
                       "text, a number, true, false, null, a list or a mapping",
                       "Quote dates and times, such as '\"2024-01-01\"'")
    if _is_type_error(kind) or kind == "crash_points":
        return Problem(where, "wrong type", value, show_typed(value),
                       describe(*resolve(loc)))
    message = detail["msg"]
    return Problem(where, message[:1].lower() + message[1:], value, show(value))


def _bounded_noun(loc: Loc, value: object) -> str:
    """What the field holds (-1 for seconds is out of a number's range, not an integer's);
    by the value where the field is a union's member."""
    annotation, _ = resolve(loc)
    if annotation in (int, float):
        return _NOUNS[annotation]
    return "an integer" if isinstance(value, int) else "a number"


def _bound(bound: object) -> object:
    """A float field's whole bound as pydantic gives it (0.0), written as YAML would (0)."""
    return int(bound) if isinstance(bound, float) and bound.is_integer() else bound


_BOUNDS = {
    "greater_than_equal": (">=", "ge"),
    "greater_than": (">", "gt"),
    "less_than_equal": ("<=", "le"),
    "less_than": ("<", "lt"),
}
_LENGTHS = {
    "too_short": ("too few items", "at least", "min_length", "item"),
    "too_long": ("too many items", "at most", "max_length", "item"),
    "string_too_short": ("text too short", "at least", "min_length", "character"),
    "string_too_long": ("text too long", "at most", "max_length", "character"),
}


def _length(kind: str, where: Loc, value: object, ctx: dict[str, Any]) -> Problem:
    problem, bound, key, noun = _LENGTHS[kind]
    length = ctx.get("actual_length", len(value) if isinstance(value, str | list) else 0)
    return Problem(where, problem, value, plural(length, noun),
                   f"{bound} {plural(ctx[key], noun)}")


def _unknown_key(loc: Loc, where: Loc) -> Problem:
    model, _ = resolve(loc[:-1])
    allowed = list(model.model_fields) if _is_model(model) else []
    key = where[-1]
    return Problem(where, "unknown key", key, show(key), quoted(allowed),
                   did_you_mean(key, allowed), at_key=True)


def _missing(loc: Loc, where: Loc, *, tag: bool) -> Problem:
    annotation, metadata = resolve(loc)
    if tag:  # a discriminated union's mapping without its 'kind'
        return Problem((*where, "kind"), "missing required key 'kind'",
                       expected=quoted(_union_tags(annotation)), at_key=True)
    return Problem(where, f"missing required key {where[-1]!r}",
                   expected=describe(annotation, metadata),
                   hint=_MISSING_HINTS.get(str(where[-1]), ""), at_key=True)


_MISSING_HINTS = {
    "name": "Add, for example, 'name: my-scenario'",
    "dialect": "Add, for example, 'dialect: openai'",
    "model": "Add, for example, 'model: [{turn: 1, text: Done.}]'",
    "expect": "Add, for example, 'expect: {stop_state: complete}'",
    "stop_state": "Add, for example, 'stop_state: complete'",
    "at": "Add, for example, 'at: {turn: 1}'",
}


def _unknown_kind(loc: Loc, where: Loc, tag: object) -> Problem:
    annotation, _ = resolve(loc)
    tags = _union_tags(annotation)
    family = {tuple(FAULT_KINDS): "fault kind", tuple(BEHAVIOUR_KINDS): "behaviour kind"}
    label = family.get(tuple(tags), "kind")
    return Problem((*where, "kind"), f"unknown {label}", tag, show(tag),
                   quoted(tags), did_you_mean(tag, tags))


# --- what the model expects at a location -------------------------------------------------


def resolve(loc: Loc) -> tuple[Any, list[object]]:
    """The annotation and constraints the model has at pydantic location ``loc``.

    >>> resolve(("seed",))
    (<class 'int'>, [Ge(ge=0), Le(le=9223372036854775807)])
    """
    current: Any = Scenario
    metadata: list[object] = []
    for part in loc:
        current, metadata = _unwrap(current, metadata)
        current, metadata = _step(current, metadata, part)
        if current is None:
            return None, []
    return _unwrap(current, metadata)


def _step(current: Any, metadata: list[object], part: str | int) -> tuple[Any, list[object]]:
    origin = get_origin(current)
    if _is_model(current):
        field = current.model_fields.get(part) if isinstance(part, str) else None
        return (field.annotation, list(field.metadata)) if field else (None, [])
    if origin in (Union, types.UnionType):
        return _member(current, part), []
    if origin is list and isinstance(part, int):
        return get_args(current)[0], []
    if origin is dict:
        key, value = get_args(current)
        return (key if part == "[key]" else value), []
    return None, metadata


def _unwrap(annotation: Any, metadata: list[object]) -> tuple[Any, list[object]]:
    """Strip ``Annotated`` (keeping its constraints) and ``| None``."""
    while True:
        if get_origin(annotation) is Annotated:
            annotation, *extra = get_args(annotation)
            metadata = metadata + [m for e in extra for m in getattr(e, "metadata", [e])]
            continue
        members = [a for a in get_args(annotation) if a is not type(None)]
        if get_origin(annotation) in (Union, types.UnionType) and len(members) == 1:
            annotation = members[0]
            continue
        return annotation, metadata


def _member(union: Any, part: str | int) -> Any:
    """The union member a pydantic tag names: a ``kind`` literal or a ``Tag``."""
    for member in get_args(union):
        inner, metadata = _unwrap(member, [])
        tags = [getattr(m, "tag", None) for m in metadata]
        if part in tags or (_is_model(inner) and part in _kind_of(inner)):
            return inner
    return None


def _kind_of(model: type[BaseModel]) -> tuple[object, ...]:
    field = model.model_fields.get("kind")
    return get_args(field.annotation) if field else ()


def _union_tags(annotation: Any) -> list[str]:
    return [str(tag) for member in get_args(annotation) if _is_model(member)
            for tag in _kind_of(member)]


def _literal_values(loc: Loc) -> tuple[object, ...]:
    annotation, _ = resolve(loc)
    return get_args(annotation) if get_origin(annotation) is Literal else ()


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def describe(annotation: Any, metadata: list[object]) -> str:
    """What a value of ``annotation`` looks like, in words, with its lower bound.

    >>> describe(int, [annotated_types.Ge(1)])
    'an integer >= 1'
    """
    origin = get_origin(annotation)
    if origin is Literal:
        return quoted(get_args(annotation))
    if origin in (Union, types.UnionType):
        return _describe_union(annotation)
    noun = _NOUNS.get(origin or annotation, "a mapping" if _is_model(annotation) else "a value")
    return noun + _lower_bound(metadata)


_NOUNS: dict[Any, str] = {
    bool: "true or false",
    int: "an integer",
    float: "a number",
    str: "text",
    list: "a list",
    dict: "a mapping",
}


def _describe_union(annotation: Any) -> str:
    tags = _union_tags(annotation)
    if tags:
        return f"a mapping with a 'kind' ({quoted(tags)})"
    return " or ".join(describe(*_unwrap(member, [])) for member in get_args(annotation)
                       if member is not type(None))


def _lower_bound(metadata: list[object]) -> str:
    for item in metadata:
        if isinstance(item, annotated_types.Ge):
            return f" >= {item.ge}"
        if isinstance(item, annotated_types.Gt):
            return f" > {item.gt}"
    return ""
