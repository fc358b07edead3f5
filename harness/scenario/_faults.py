"""Fault declarations: what the fake provider does wrong, keyed to (turn, attempt).

Each fault kind is declared once, in the neutral layer (:data:`harness.ports.FAULT_KINDS`):
its ``kind``, its fields with their limits and what they mean. This module derives
one strict model per kind from that declaration, named after the class
(``harness.ports.Stall`` becomes :class:`StallFault`), so the JSON Schema, the loader's
messages and the fakes cannot drift apart, and the runner turns a declaration
into the fake's value with ``fakes.FAULT_KINDS[fault.kind](**fault.fake_fields())``.
The rules that join two fields (exactly one strike point, increasing offsets) are
the fault class's ``rules``, read by the constructor and here alike; here a breach is
reported on the scenario's line.
:data:`AnyFault` is the models' union and :data:`FAULT_KINDS` their names. A fault
only describes; the fakes decide how to apply it::

    >>> StallFault(kind="stall", at=FaultAt(turn=1), after_bytes=120, seconds=120).at.attempt
    1
"""

from __future__ import annotations

import dataclasses
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Final,
    Literal,
    Self,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

from pydantic import BeforeValidator, Field, create_model, model_validator
from pydantic_core import PydanticCustomError

from harness.ports import FAULT_KINDS as _DECLARED_FAULTS
from harness.ports import (
    MAX_COUNT,
    MAX_SECONDS,
    Doc,
    Fault,
    OneLine,
    RuleBreach,
    Wording,
    retry_after_breach,
    rule_breaches,
    whole_seconds,
)
from harness.scenario._base import ScenarioModel
from harness.scenario._problems import Problem, raise_if_any

Count = Annotated[int, Field(ge=1, le=MAX_COUNT)]
Seconds = Annotated[float, Field(gt=0, le=MAX_SECONDS)]


class FaultAt(ScenarioModel):
    """Which request a fault hits: the n-th attempt of the conversation's turn.

    Keyed to the turn, not to a request counter, so a restarted agent that
    re-sends a request meets the same fault (DESIGN §3).
    """

    turn: Count
    """The conversation turn, from 1: the number of assistant replies so far plus one."""
    attempt: Count = 1
    """The attempt of that turn, from 1; retries after a failure are attempts 2, 3, …"""


class FaultModel(ScenarioModel):
    """The base of every derived fault model: where it strikes, and the fake's fields."""

    at: FaultAt
    """The request this fault applies to."""

    if TYPE_CHECKING:
        kind: str

    def fake_fields(self) -> dict[str, Any]:
        """The keyword arguments of the fake fault class of the same ``kind``.

        >>> ConnectionResetFault(kind="connection_reset", at=FaultAt(turn=1),
        ...                      after_events=2).fake_fields()
        {'after_bytes': None, 'after_events': 2}
        """
        return as_fake_fields(self.model_dump(exclude={"kind", "at"}))

    @model_validator(mode="after")
    def _joint_rules(self) -> Self:
        # The rules that join fields are the fault class's own, read here as its
        # constructor reads them: a scenario and a fault built in Python agree.
        declared = _DECLARED_FAULTS[self.kind]
        raise_if_any([as_problem(breach) for breach in rule_breaches(declared, self)])
        return self


# What YAML brings that the fake's type does not take as it is, by field name: people
# quote header values ("60"), which the declaration reads as whole seconds too.
_BEFORE: Final = {"retry_after": BeforeValidator(whole_seconds)}
_ONE_LINE: Final = Field(pattern=r"^[^\r\n]*$")
# Metadata that only words messages and documentation; the model has no use for it.
_WORDS_ONLY: Final = (Doc, Wording)


# ----------------------------------------------------------------- derivation


def _scenario_type(hint: Any) -> Any:
    """The fake's field type as a strict model reads YAML: lists for tuples, limits kept.

    >>> _scenario_type(tuple[int, ...])
    list[int]
    """
    origin, args = get_origin(hint), get_args(hint)
    if origin is Annotated:
        metadata = [_ONE_LINE if isinstance(m, OneLine) else m
                    for m in hint.__metadata__ if not isinstance(m, _WORDS_ONLY)]
        base = _scenario_type(args[0])
        return Annotated[(base, *metadata)] if metadata else base
    if origin is Literal and all(type(choice) is int for choice in args):
        return Annotated[hint, BeforeValidator(_int_choice)]
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return list[_scenario_type(args[0])]  # type: ignore[misc]
    if args and origin is not None and _is_union(hint):
        return Union[tuple(_scenario_type(a) for a in args)]  # noqa: UP007
    return hint


def _int_choice(value: object) -> object:
    """``value`` unless it is a float: a strict model still matches 429.0 with ``Literal[429]``,
    where the declaration takes an int only (a status is never 429.0)."""
    if isinstance(value, float):
        raise PydanticCustomError("literal_error", "Input should be an int", {})
    return value


def _is_union(hint: Any) -> bool:
    return get_origin(hint) is Union or type(hint).__name__ == "UnionType"


def _doc(hint: Any) -> str | None:
    metadata = getattr(hint, "__metadata__", ())
    return next((m.text for m in metadata if isinstance(m, Doc)), None)


def _model_field(name: str, hint: Any, default: Any) -> tuple[Any, Any]:
    field_type = _scenario_type(hint)
    if name in _BEFORE:
        field_type = Annotated[field_type, _BEFORE[name]]
    return field_type, Field(default, description=_doc(hint))


# A derived model has no source to read attribute docstrings from (its descriptions come
# from the fake's Doc metadata): looking for one walks every frame of the import and
# asks inspect for each frame's module, a fifth of a second for nothing in each process.
_NO_SOURCE: Final = {"use_attribute_docstrings": False}


def _kind_type(kind: str) -> Any:
    return Literal[kind]


def fault_model(fake: type[Fault]) -> type[FaultModel]:
    """The strict scenario model of one fake fault class (``kind`` picks it in a union)."""
    hints = get_type_hints(fake, include_extras=True)
    fields = {
        f.name: _model_field(f.name, hints[f.name],
                             ... if f.default is dataclasses.MISSING else f.default)
        for f in dataclasses.fields(fake)  # type: ignore[arg-type]
    }
    return create_model(  # type: ignore[call-overload,no-any-return]
        f"{fake.__name__}Fault",
        __base__=FaultModel,
        __module__=__name__,
        __doc__=fake.summary,
        __cls_kwargs__=_NO_SOURCE,
        kind=(_kind_type(fake.kind), Field(...)),
        **fields,
    )


def value_model(fake: type[Any], name: str, module: str) -> type[ScenarioModel]:
    """The strict scenario model of a fakes dataclass that is not a fault (a quota …).

    Its fields, limits and descriptions are the dataclass's, as for a fault; ``module``
    is where the model is bound to ``name`` (so that it pickles).
    """
    hints = get_type_hints(fake, include_extras=True)
    fields = {
        f.name: _model_field(f.name, hints[f.name],
                             ... if f.default is dataclasses.MISSING else f.default)
        for f in dataclasses.fields(fake)
    }
    return create_model(  # type: ignore[call-overload,no-any-return]
        name, __base__=ScenarioModel, __module__=module, __cls_kwargs__=_NO_SOURCE,
        __doc__=(fake.__doc__ or name).split("\n")[0], **fields)


FAULT_MODELS: Final[tuple[type[FaultModel], ...]] = tuple(
    fault_model(fake) for fake in _DECLARED_FAULTS.values()
)
"""One model per fake fault class, in the fakes' order."""
FAULT_KINDS: Final = _DECLARED_FAULTS  # the same kinds, in the same order
FAULT_MODELS_BY_NAME: Final[dict[str, type[FaultModel]]] = {
    model.__name__: model for model in FAULT_MODELS
}

if TYPE_CHECKING:
    AnyFault = FaultModel
else:
    AnyFault = Annotated[Union[FAULT_MODELS], Field(discriminator="kind")]  # noqa: UP007
    """Any fault; ``kind`` picks the model."""
    globals().update(FAULT_MODELS_BY_NAME)


def as_fake_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """Lists become tuples: the fakes are frozen values and want immutable fields.

    >>> as_fake_fields({"offsets": [1, 7]})
    {'offsets': (1, 7)}
    """
    return {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}


def retry_after_problems(value: int | str | None) -> list[Problem]:
    """A problem unless ``value`` is whole seconds or an HTTP date.

    >>> retry_after_problems("Wed, 21 Oct 2015 07:28:00 GMT")
    []
    """
    breach = retry_after_breach(value)
    return [] if breach is None else [as_problem(breach)]


def as_problem(breach: RuleBreach) -> Problem:
    """A fault rule's breach as the scenario reports it, on the fault's line."""
    return Problem(breach.loc, breach.problem, breach.value, breach.got, breach.expected,
                   at_key=breach.at_key)


