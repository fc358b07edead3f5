"""A fault is refused alike whether it is built in Python or read from a scenario.

Both read the bounds its class declares; these tests try every numeric field of every
fault kind at each declared bound, just beyond it and far beyond it, and compare.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

import pytest
from annotated_types import Ge, Gt, Le, Lt
from hypothesis import given
from hypothesis import strategies as st

from fakes import CUTTING_FAULTS, FAULT_KINDS, SILENCING_FAULTS, Fault, Stall
from harness import ConfigError, ScenarioError
from harness.scenario import parse_scenario

ROOT = Path(__file__).resolve().parents[2]

# The fields a kind needs to be valid at all, so that only the field under test is wrong.
NEEDS: dict[str, dict[str, Any]] = {
    "http_error": {"status": 429},
    "split_at": {"offsets": [5]},
    "stall": {"after_events": 1},
    "connection_reset": {"after_events": 1},
}


def _numbers(hint: Any) -> list[tuple[type, list[object]]]:
    """Each numeric branch of ``hint`` (int or float) with the bounds declared on it."""
    found: list[tuple[type, list[object]]] = []

    def walk(node: Any, metadata: list[object]) -> None:
        if get_origin(node) is not None and hasattr(node, "__metadata__"):
            walk(get_args(node)[0], [*node.__metadata__, *metadata])
        elif get_origin(node) is tuple:
            walk(get_args(node)[0], [])
        elif get_args(node) and get_origin(node) is not None:
            for branch in get_args(node):
                walk(branch, [])
        elif node in (int, float):
            found.append((node, [m for m in metadata if isinstance(m, Ge | Gt | Le | Lt)]))

    walk(hint, [])
    return found


def _edges(kind: type, bounds: list[object]) -> list[object]:
    step = 1 if kind is int else 0.001
    values: list[object] = [-1, 10**7, 10**10]
    for bound in bounds:
        limit = getattr(bound, type(bound).__name__.lower())
        values += [limit, limit - step, limit + step]
    return [kind(v) if kind is int else float(v) for v in values]  # type: ignore[call-overload]


def _cases() -> list[tuple[str, str, object]]:
    cases = []
    for kind, cls in FAULT_KINDS.items():
        hints = get_type_hints(cls, include_extras=True)
        for field in dataclasses.fields(cls):  # type: ignore[arg-type]
            for number, bounds in _numbers(hints[field.name]):
                cases += [(kind, field.name, v) for v in _edges(number, bounds)]
    return cases


def _arguments(kind: str, field: str, value: object) -> dict[str, Any]:
    arguments = {**NEEDS.get(kind, {})}
    if field in ("after_bytes", "after_events"):
        arguments.pop("after_events", None)
    if field == "offsets":
        value = [value]
    arguments[field] = value
    return arguments


def _python_accepts(kind: str, arguments: dict[str, Any]) -> bool:
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in arguments.items()}
    try:
        FAULT_KINDS[kind](**values)
    except ConfigError:
        return False
    return True


def _yaml_accepts(kind: str, arguments: dict[str, Any]) -> bool:
    fault = {"kind": kind, "at": {"turn": 1}, **arguments}
    text = (f"name: bounds\ndialect: openai\nmodel: [{{turn: 1, text: hi}}]\n"
            "expect: {stop_state: complete}\n"
            f"faults: [{json.dumps(fault)}]\n")
    try:
        parse_scenario(text.encode(), "bounds.yaml")
    except ScenarioError:
        return False
    return True


CASES = _cases()


def test_every_fault_kind_with_a_numeric_field_is_tried() -> None:
    tried = {kind for kind, _, _ in CASES}
    numeric = {kind for kind, cls in FAULT_KINDS.items()
               if any(_numbers(h) for h in get_type_hints(cls, include_extras=True).values())}
    assert tried == numeric
    assert {"stall", "stall_before_headers", "slow_drip", "split_at"} <= tried


@pytest.mark.parametrize(("kind", "field", "value"), CASES)
def test_python_and_yaml_agree_at_and_beyond_each_bound(kind: str, field: str,
                                                        value: object) -> None:
    arguments = _arguments(kind, field, value)
    assert _python_accepts(kind, arguments) == _yaml_accepts(kind, arguments)


@given(seconds=st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12,
                         max_value=1e12) | st.integers(min_value=-10**12, max_value=10**12))
def test_a_stall_of_any_length_is_judged_alike(seconds: float) -> None:
    for kind in ("stall", "stall_before_headers", "stall_connecting"):
        arguments = _arguments(kind, "seconds", seconds)
        assert _python_accepts(kind, arguments) == _yaml_accepts(kind, arguments)


# The rules that are not a number's bounds: fields that exclude each other, order,
# text (empty, too long, a line break), a value outside a kind's choices, a wrong type.
# Each pair is a kind and the fields given beside the ones it needs.
RULES: list[tuple[str, dict[str, Any]]] = [
    ("stall", {"after_bytes": 1, "after_events": 1}),
    ("stall", {"after_events": None}),
    ("stall", {"after_bytes": 0, "after_events": None}),
    ("stall", {"after_events": 1, "after_bytes": False}),
    ("stall", {"after_events": True}),
    ("stall", {"after_events": 1.0}),
    ("stall", {"after_events": "1"}),
    ("stall", {"seconds": "3"}),
    ("stall", {"seconds": True}),
    ("connection_reset", {"after_bytes": 1, "after_events": 1}),
    ("connection_reset", {"after_events": None}),
    ("truncated_tool_arguments", {"fraction": 0.5, "offset": 2}),
    ("invalid_tool_arguments", {"fraction": 0.5, "offset": 2}),
    ("invalid_tool_arguments", {"offset": 0}),
    ("split_at", {"offsets": []}),
    ("split_at", {"offsets": [5, 5]}),
    ("split_at", {"offsets": [5, 3]}),
    ("split_at", {"offsets": [1, 2]}),
    ("http_error", {"status": 418}),
    ("http_error", {"status": 429.0}),
    ("http_error", {"status": "429"}),
    ("http_error", {"status": True}),
    ("http_error", {"retry_after": "Wed, 21 Oct 2015 07:28:00 GMT"}),
    ("http_error", {"retry_after": "soon"}),
    ("http_error", {"retry_after": ""}),
    ("http_error", {"retry_after": "60"}),
    ("http_error", {"retry_after": "99999999"}),
    ("http_error", {"retry_after": "²"}),
    ("http_error", {"retry_after": "x" * 101}),
    ("http_error", {"retry_after": True}),
    ("http_error", {"retry_after": 1.5}),
    ("http_error", {"should_retry": "yes"}),
    ("http_error", {"should_retry": 1}),
    ("http_error", {"message": ""}),
    ("http_error", {"message": "x" * 1001}),
    ("inject_comments", {"text": "a\nb"}),
    ("inject_comments", {"text": "a\rb"}),
    ("inject_comments", {"text": ""}),
    ("inject_comments", {"text": "x" * 1000}),
    ("inject_comments", {"text": 5}),
    ("error_in_stream", {"error_type": ""}),
    ("error_in_stream", {"message": "a\nb"}),
    ("line_endings", {"style": "LF"}),
    ("line_endings", {"style": None}),
    ("random_splits", {"count": None}),
    ("doom_loop", {"phrase": ""}),
    ("doom_loop", {"phrase": "x" * 101}),
    ("doom_loop", {"repeats": 7}),
    ("doom_loop", {"phrase": "?! ..."}),
    ("doom_loop", {"repeats": 4.0}),
]


@pytest.mark.parametrize(("kind", "given"), RULES, ids=[f"{k}-{g}"[:60] for k, g in RULES])
def test_python_and_yaml_agree_on_the_rules_beside_the_bounds(kind: str,
                                                              given: dict[str, Any]) -> None:
    arguments = {**NEEDS.get(kind, {}), **given}
    assert _python_accepts(kind, arguments) == _yaml_accepts(kind, arguments)


# One breach of each rule that joins fields: declared once on the fault's class, so a
# scenario's message and a Python constructor's say the same after their locations.
JOINT: list[tuple[str, dict[str, Any]]] = [
    ("stall", {"after_bytes": 1, "after_events": 1}),
    ("connection_reset", {"after_events": None}),
    ("invalid_tool_arguments", {"fraction": 0.5, "offset": 2}),
    ("split_at", {"offsets": [5, 3]}),
    ("http_error", {"retry_after": "soon"}),
    ("doom_loop", {"phrase": "?! ..."}),
]


@pytest.mark.parametrize(("kind", "given"), JOINT, ids=[k for k, _ in JOINT])
def test_a_joint_rule_is_worded_alike_in_python_and_yaml(kind: str, given: dict[str, Any]
                                                         ) -> None:
    arguments = {**NEEDS.get(kind, {}), **given}
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in arguments.items()}
    with pytest.raises(ConfigError) as python:
        FAULT_KINDS[kind](**values)
    fault = {"kind": kind, "at": {"turn": 1}, **arguments}
    text = (f"name: bounds\ndialect: openai\nmodel: [{{turn: 1, text: hi}}]\n"
            "expect: {stop_state: complete}\n"
            f"faults: [{json.dumps(fault)}]\n")
    with pytest.raises(ScenarioError) as yaml:
        parse_scenario(text.encode(), "bounds.yaml")
    where, said = str(python.value).split(": ", 1)
    assert where.startswith(FAULT_KINDS[kind].__name__)
    assert str(yaml.value).endswith(f": {said}")


def test_the_rules_beside_the_bounds_cover_every_kind_with_such_a_rule() -> None:
    # A joint rule (a class's rules) or a field of text or choices, on a kind not tried
    # above, would be left unchecked.
    ruled = {kind for kind, cls in FAULT_KINDS.items() if cls.rules}
    assert ruled <= {kind for kind, _ in RULES}


@pytest.mark.parametrize("value", ["60", 60])
def test_a_retry_after_of_digits_is_the_same_fault_in_python_and_yaml(value: object) -> None:
    text = (b"name: r\ndialect: openai\nmodel: [{turn: 1, text: hi}]\n"
            b"expect: {stop_state: complete}\n"
            b"faults: [{kind: http_error, at: {turn: 1}, status: 429, retry_after: '60'}]\n")
    [declared] = parse_scenario(text, "r.yaml").faults
    from_yaml = FAULT_KINDS["http_error"](**declared.fake_fields())
    assert from_yaml == FAULT_KINDS["http_error"](status=429, retry_after=value)
    assert from_yaml.retry_after == 60


def test_a_week_long_stall_is_the_longest_python_accepts() -> None:
    Stall(after_events=1, seconds=7 * 24 * 3600)
    with pytest.raises(ConfigError, match=r"^Stall\.seconds: got 10000000; expected a number "
                                          r"of seconds in \[0, 604800\.0\], or None to stall "
                                          r"forever$"):
        Stall(after_events=1, seconds=10**7)


def test_what_a_fault_does_to_a_begun_stream_is_declared_on_its_class() -> None:
    assert {"stall"} == SILENCING_FAULTS
    assert {"connection_reset", "no_terminal_event", "error_in_stream"} == CUTTING_FAULTS
    assert all(isinstance(FAULT_KINDS[kind], type) and issubclass(FAULT_KINDS[kind], Fault)
               for kind in SILENCING_FAULTS | CUTTING_FAULTS)


@pytest.mark.parametrize("reader", ["harness/checks/_timing.py", "harness/_report_text.py"])
def test_the_readers_of_a_faults_meaning_never_name_a_kind(reader: str) -> None:
    source = (ROOT / reader).read_text(encoding="utf-8")
    # 'http_error' is also how a request was answered (its delivery), which they may read.
    kinds = set(FAULT_KINDS) - {"http_error"}
    named = sorted(kind for kind in kinds if re.search(rf"[\"']{kind}[\"']", source))
    assert named == []
