"""The SDKs' request-parameter walk, skipped where it cannot change anything: the same answers.

Each test compares the walk inside :func:`sdk_params_walked_cheaply` with the SDK's own
walk outside it, on the SDK's real parameter types: JSON data (where the walk is
skipped), data the walk must change (an alias, an omitted value, a pydantic model, a
date, a tuple) and random JSON (Hypothesis).
"""

from __future__ import annotations

import asyncio
import datetime
import json
from typing import Annotated, Any, Required, TypedDict

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openai import omit
from openai._utils import _transform as transform_module
from openai._utils._transform import PropertyInfo
from openai.types.chat import completion_create_params
from openai.types.responses import EasyInputMessage, response_create_params

from harness.intercept._sdk_params import NotJson, json_copy, sdk_params_walked_cheaply

CHAT = completion_create_params.CompletionCreateParamsStreaming
RESPONSES = response_create_params.ResponseCreateParamsStreaming


class Aliased(TypedDict, total=False):
    """A type whose field the SDK renames on the wire (as a few beta endpoints do)."""

    from_: Required[Annotated[str, PropertyInfo(alias="from")]]
    items: list[dict[str, Any]]


class Nested(TypedDict, total=False):
    """The alias one level down, behind a union and a list."""

    inner: list[Aliased | str]


def both_ways(data: object, expected_type: object) -> tuple[Any, Any]:
    """The SDK's walk alone, then inside the harness's patch; sync and async must agree."""
    own = transform_module.transform(data, expected_type)
    own_async = asyncio.run(transform_module.async_transform(data, expected_type))
    with sdk_params_walked_cheaply():
        cheap = transform_module.transform(data, expected_type)
        cheap_async = asyncio.run(transform_module.async_transform(data, expected_type))
    assert cheap == cheap_async
    assert own == own_async
    return own, cheap


def responses_params() -> dict[str, Any]:
    return {
        "model": "gpt-4o-mini",
        "input": [
            {"role": "system", "content": "You send mail."},
            {"role": "user", "content": [{"type": "input_text", "text": "Mail the CFO."}]},
            {"type": "function_call", "call_id": "c1", "name": "send_mail",
             "arguments": '{"to": "cfo@example.com"}'},
            {"type": "function_call_output", "call_id": "c1", "output": '{"ok": true}'},
        ],
        "tools": [{"type": "function", "name": "send_mail", "strict": True,
                   "parameters": {"type": "object", "properties": {"to": {"type": "string"}}}}],
        "stream": True,
        "temperature": 0.5,
        "metadata": {"run": "1"},
    }


def test_json_parameters_come_back_equal_in_value_and_key_order() -> None:
    for data, kind in ((responses_params(), RESPONSES),
                       ({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                         "tools": [{"type": "function", "function": {"name": "f"}}],
                         "stream": True, "stream_options": {"include_usage": True}}, CHAT)):
        own, cheap = both_ways(data, kind)
        assert cheap == own
        assert json.dumps(cheap) == json.dumps(own)  # the request's bytes


def test_the_copy_is_the_callers_own_so_an_sdk_that_edits_it_edits_only_the_copy() -> None:
    data = responses_params()
    with sdk_params_walked_cheaply():
        cheap = transform_module.transform(data, RESPONSES)
    cheap["input"][0]["content"] = "changed"
    cheap["tools"].append({})
    assert data == responses_params()


def test_an_alias_reachable_in_the_type_is_renamed_as_the_sdk_renames_it() -> None:
    own, cheap = both_ways({"from_": "a", "items": [{"x": 1}]}, Aliased)
    assert cheap == own == {"from": "a", "items": [{"x": 1}]}
    own, cheap = both_ways({"inner": [{"from_": "b"}, "text"]}, Nested)
    assert cheap == own == {"inner": [{"from": "b"}, "text"]}


def test_what_is_not_json_is_walked_by_the_sdk() -> None:
    """An omitted value is dropped, a pydantic model dumped, a tuple and a date left to the
    SDK: all as the SDK alone does."""
    data = {**responses_params(), "temperature": omit, "user": datetime.date(2024, 1, 2),
            "include": ("reasoning.encrypted_content",)}
    data["input"] = [EasyInputMessage(role="user", content="hi"), *data["input"]]
    own, cheap = both_ways(data, RESPONSES)
    assert cheap == own
    assert "temperature" not in cheap
    assert cheap["input"][0] == {"role": "user", "content": "hi"}


def test_json_copy_refuses_what_the_walk_may_change() -> None:
    assert json_copy({"a": [1, 2.5, True, None, "x"]}) == {"a": [1, 2.5, True, None, "x"]}
    for value in ((1, 2), {1: "a"}, omit, datetime.date(2024, 1, 1), b"x", {"a": {"b": (1,)}}):
        with pytest.raises(NotJson):
            json_copy(value)


def test_the_sdks_walk_is_its_own_again_after_the_incarnation() -> None:
    own_sync, own_async = (transform_module._transform_recursive,
                           transform_module._async_transform_recursive)
    with sdk_params_walked_cheaply():
        assert transform_module._transform_recursive is not own_sync
    assert transform_module._transform_recursive is own_sync
    assert transform_module._async_transform_recursive is own_async


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=20)
INPUT_ITEM = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "system"]), "content": JSON},
    optional={"type": st.sampled_from(["message", "function_call", "function_call_output"]),
              "call_id": st.text(max_size=4), "output": JSON, "from_": JSON})


@given(st.lists(INPUT_ITEM, max_size=5), JSON, st.dictionaries(
    st.sampled_from(["model", "tools", "metadata", "text", "from_", "inner", "items"]), JSON))
def test_random_json_parameters_come_back_as_the_sdk_makes_them(
        items: list[dict[str, Any]], tools: object, others: dict[str, Any]) -> None:
    data = {**others, "input": items, "tools": tools}
    for kind in (RESPONSES, CHAT, Aliased, Nested):
        own, cheap = both_ways(data, kind)
        assert json.dumps(cheap) == json.dumps(own)
