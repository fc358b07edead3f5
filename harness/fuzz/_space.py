"""What a fault schedule may hold: the bounds, and the Hypothesis strategies drawn from them.

A schedule is the part of a scenario the fuzzer varies: its faults (kind and fields x
turn x attempt), one crash (point x when x class) and the tools' behaviours. The
faults' kinds and fields are not listed here: they come from the one declaration of
each kind (:data:`harness.scenario.FAULT_KINDS` and the models derived from it), read
through its JSON Schema, so a new fault kind is fuzzed as soon as it is declared. What
this module adds is the *bounds*: how large a number may grow, how many faults one
schedule holds, which kinds take part (:class:`FuzzBounds`).

Every strategy lists its simplest choice first (no fault, no crash, a field left at its
default, the smallest number), so that Hypothesis shrinks a failing schedule towards
the shortest scenario that still fails.

    >>> FuzzBounds().max_faults
    3
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from hypothesis import strategies as st

from fakes import LOOP_BOUND_BEHAVIOURS
from harness.fuzz._bounds import FuzzBounds
from harness.runner import CrashSpec, crash_specs, parse_world_point
from harness.scenario import (
    BEHAVIOUR_MODELS,
    FAULT_KINDS,
    FAULT_MODELS_BY_NAME,
    FaultModel,
    Scenario,
)

Json = dict[str, Any]


def _const_kind(schema: Json) -> str:
    return str(schema["properties"]["kind"]["const"])


# ------------------------------------------------------------- fields from schemas


_OMIT: Final = object()  # a field left at its default: the simplest choice of all


def field_strategy(schema: Json, bounds: FuzzBounds) -> st.SearchStrategy[Any] | None:
    """Values for one field of a fault or behaviour, from its JSON Schema, inside ``bounds``.

    ``None`` when the fuzzer leaves the field to its default (texts, and anything else it
    does not vary).

    >>> field_strategy({"type": "integer", "minimum": 1, "maximum": 10**6},
    ...                FuzzBounds(max_number=5))
    integers(min_value=1, max_value=6)
    >>> field_strategy({"type": "string", "minLength": 1}, FuzzBounds()) is None
    True
    """
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema:
        return _any_of(schema["anyOf"], bounds)
    kind = schema.get("type")
    if kind == "integer":
        low = int(schema.get("minimum", 0))
        return st.integers(low, min(int(schema.get("maximum", low + bounds.max_number)),
                                    low + bounds.max_number))
    if kind == "number":
        return _numbers(schema, bounds)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return _increasing_lists(schema["items"], bounds)
    return None


def _any_of(options: Sequence[Json], bounds: FuzzBounds) -> st.SearchStrategy[Any] | None:
    found = [s for s in (field_strategy(o, bounds) for o in options if o.get("type") != "null")
             if s is not None]
    if not found:
        return None
    # null is the default of every optional field, so leaving the field out covers it.
    return st.one_of(*found)


def _numbers(schema: Json, bounds: FuzzBounds) -> st.SearchStrategy[float]:
    low = _limit(schema, ("minimum", "exclusiveMinimum"), 0)
    high = _limit(schema, ("maximum", "exclusiveMaximum"), bounds.max_seconds)
    if high - low <= 1:  # a fraction: a few round values read better than 0.4137…
        return st.sampled_from([low + (high - low) * k / 4 for k in (2, 1, 3)])
    first = math.floor(low) + 1 if "exclusiveMinimum" in schema else math.ceil(low)
    return st.integers(first, min(math.floor(high), bounds.max_seconds)).map(float)


def _limit(schema: Json, keys: tuple[str, str], default: float) -> float:
    """The inclusive bound if given, else the exclusive one, else ``default``."""
    return float(next((schema[k] for k in keys if k in schema), default))


def _increasing_lists(items: Json, bounds: FuzzBounds) -> st.SearchStrategy[list[int]]:
    low = int(items.get("minimum", 0))
    numbers = st.integers(low, low + bounds.max_number)
    return st.lists(numbers, min_size=1, max_size=3, unique=True).map(sorted)


def fields_strategy(schema: Json, bounds: FuzzBounds, *, skip: frozenset[str] = frozenset()
                    ) -> st.SearchStrategy[Json]:
    """A model's fields as a mapping: required ones always, optional ones left out first."""
    required = set(schema.get("required", ()))
    parts: dict[str, st.SearchStrategy[Any]] = {}
    for name, sub in schema["properties"].items():
        values = None if name in skip else field_strategy(sub, bounds)
        if values is None:
            continue
        parts[name] = values if name in required else st.one_of(st.just(_OMIT), values)
    return st.fixed_dictionaries(parts).map(
        lambda drawn: {k: v for k, v in drawn.items() if v is not _OMIT})


# ---------------------------------------------------------------------- a schedule


@dataclass(frozen=True)
class Schedule:
    """One fault schedule over a scenario: faults, one crash or none, tool behaviours.

    Faults and behaviours are plain data in the scenario format, ready to be written.
    """

    faults: tuple[Json, ...] = ()
    crash: CrashSpec | None = None
    tools: tuple[tuple[str, Json], ...] = ()
    """Per tool, what replaces its declaration's fields: a behaviour and its timeout."""

    @property
    def size(self) -> int:
        """How much the schedule adds to the scenario (what shrinking makes small)."""
        return len(self.faults) + len(self.tools) + (self.crash is not None)


def fault_strategy(kinds: Sequence[str], last_turn: int, bounds: FuzzBounds
                   ) -> st.SearchStrategy[Json]:
    """One fault: a kind of ``kinds``, its fields, and the (turn, attempt) it strikes."""
    by_kind = {_const_kind(m.model_json_schema()): m for m in FAULT_MODELS_BY_NAME.values()}
    per_kind = [_one_fault(by_kind[kind], last_turn, bounds) for kind in kinds]
    return st.one_of(*per_kind)


def _one_fault(model: type[FaultModel], last_turn: int, bounds: FuzzBounds
               ) -> st.SearchStrategy[Json]:
    schema = model.model_json_schema()
    kind = _const_kind(schema)
    at = st.fixed_dictionaries({"turn": st.integers(1, last_turn)},
                               optional={"attempt": st.integers(2, bounds.max_attempt)})
    fields = fields_strategy(schema, bounds, skip=frozenset({"kind", "at"}))
    return st.tuples(at, fields).map(lambda pair: {"kind": kind, "at": pair[0], **pair[1]})


def behaviour_strategy(bounds: FuzzBounds) -> st.SearchStrategy[Json]:
    """A tool's misbehaviour with the timeout the agent gives the tool.

    The timeout comes with it: a hanging tool without one waits for ever, which says
    nothing about recovery.
    """
    by_kind = {_const_kind(m.model_json_schema()): m for m in BEHAVIOUR_MODELS}
    behaviours = st.one_of(*[fields_strategy(by_kind[k].model_json_schema(), bounds)
                             for k in bounds.behaviours if k in by_kind])
    timeouts = st.integers(1, bounds.max_seconds).map(float)
    return st.tuples(behaviours, timeouts).map(
        lambda pair: {"behaviour": pair[0], "timeout_seconds": pair[1]})


def crash_candidates(base: Scenario, points: Sequence[str], events: Sequence[str]
                     ) -> list[CrashSpec]:
    """Every crash a recorded run allows in ``base``'s crash classes, where bugs live first.

    The runner's own order (:func:`harness.runner.crash_specs`: fsync points first, DESIGN
    §3), with a crash right after a tool's side effect (``after_tool``) ahead of all: the
    moment whose outcome is unknown, and it reads the same for every agent. A shrunk
    schedule prefers the earlier ones, and Hypothesis draws them more often.

    >>> from harness.scenario import Scenario
    >>> base = Scenario(name="t", dialect="openai", model=[{"turn": 1, "text": "Hi."}],
    ...     crash={"points": "all", "classes": ["unsynced_lost"]},
    ...     expect={"stop_state": "complete"})
    >>> [c.label for c in crash_candidates(base, ["journal:write#1", "journal:fsync#1"],
    ...                                    ["before_request:1", "after_tool:mail#1"])][:3]
    ['after_tool:mail#1:at:unsynced_lost', 'journal:fsync#1:after:unsynced_lost', \
'journal:fsync#1:before:unsynced_lost']
    """
    specs = crash_specs(base, list(dict.fromkeys([*points, *events])))
    return sorted(specs, key=lambda spec: not _after_tool(spec.point_id))


def _after_tool(point_id: str) -> bool:
    point = parse_world_point(point_id)
    return point is not None and point.kind == "after_tool"


def crash_strategy(crashes: Sequence[CrashSpec]) -> st.SearchStrategy[CrashSpec | None]:
    """No crash, or one of ``crashes``: three schedules in four crash.

    The point is drawn first and its way of crashing second, so every point is as likely
    as any other however many classes apply to it; no crash is the simplest choice.
    """
    by_point: dict[str, list[CrashSpec]] = {}
    for crash in crashes:
        by_point.setdefault(crash.point_id, []).append(crash)
    if not by_point:
        return st.none()
    one = st.sampled_from(list(by_point)).flatmap(lambda p: st.sampled_from(by_point[p]))
    return st.integers(0, 3).flatmap(lambda n: one if n else st.none())


def _fault_kinds(bounds: FuzzBounds) -> list[str]:
    """The fault kinds a schedule may hold; none when ``max_faults`` is 0."""
    return [k for k in bounds.fault_kinds if k in FAULT_KINDS] if bounds.max_faults else []


def _tool_bounds(tools: Sequence[str], bounds: FuzzBounds, blocking: Collection[str]
                 ) -> list[tuple[str, FuzzBounds]]:
    """The tools whose behaviour a schedule may set, each with the behaviours it may draw."""
    loop_free = replace(bounds, behaviours=tuple(
        k for k in bounds.behaviours if k not in LOOP_BOUND_BEHAVIOURS))
    per_tool = [(t, loop_free if t in blocking else bounds) for t in tools]
    return [(t, b) for t, b in per_tool if b.behaviours]


def varied(*, tools: Sequence[str], crashes: Sequence[CrashSpec], bounds: FuzzBounds,
           blocking: Collection[str] = ()) -> tuple[str, ...]:
    """What the schedules over these tools and crash candidates vary; ``()``: nothing, every
    schedule is the scenario as written.

    >>> varied(tools=[], crashes=[], bounds=FuzzBounds(max_faults=0))
    ()
    >>> varied(tools=["mail"], crashes=[], bounds=FuzzBounds(max_faults=0))
    ('tool behaviours',)
    """
    parts = {"faults": bool(_fault_kinds(bounds)), "crashes": bool(crashes),
             "tool behaviours": bool(_tool_bounds(tools, bounds, blocking))}
    return tuple(part for part, varies in parts.items() if varies)


def schedule_strategy(*, last_turn: int, tools: Sequence[str], crashes: Sequence[CrashSpec],
                      bounds: FuzzBounds, blocking: Collection[str] = ()
                      ) -> st.SearchStrategy[Schedule]:
    """Schedules over a scenario with ``last_turn`` turns, these tools and crash candidates.

    A tool in ``blocking`` is called from blocking code, with no event loop: it draws no
    behaviour that waits on one.
    """
    kinds = _fault_kinds(bounds)
    faults = (st.lists(fault_strategy(kinds, last_turn, bounds), max_size=bounds.max_faults)
              if kinds else st.just([]))
    crash = crash_strategy(crashes)
    optional = {t: behaviour_strategy(b) for t, b in _tool_bounds(tools, bounds, blocking)}
    behaviours: st.SearchStrategy[Mapping[str, Json]] = (
        st.fixed_dictionaries({}, optional=optional) if optional else st.just({}))
    return st.builds(
        lambda f, c, b: Schedule(tuple(f), c, tuple(sorted(b.items()))),
        faults, crash, behaviours)
