"""LangGraph and the OpenAI Agents SDK build each stand-in's tool schema once per worker.

Each incarnation imports the agent's tools afresh and hands its framework new stand-ins;
the framework's pydantic models for them are the same every time, and were a fifth of a
LangGraph restart (see :mod:`harness.intercept._frameworks`). Here two incarnations'
stand-ins of the example's tools go through the frameworks' own builders.
"""

from __future__ import annotations

import gc
import importlib
import sys
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import pytest

from harness.intercept._frameworks import schemas_derived_once
from harness.intercept._targets import stand_in

pytestmark = [pytest.mark.system, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

TOOLS = "examples.frameworks.tools"


def fresh_tools() -> ModuleType:
    """The tools module as an incarnation imports it: afresh."""
    sys.modules.pop(TOOLS, None)
    return importlib.import_module(TOOLS)


def stand_ins(answer: str) -> list[Callable[..., Any]]:
    tools = fresh_tools()

    async def call(tool: str, args: dict[str, Any]) -> Any:
        return {"answer": answer}

    return [stand_in(f.__name__, f, call, lambda tool, args: {"answer": answer})
            for f in (tools.send_mail, tools.append_note)]


@contextmanager
def counted(module: Any, name: str) -> Iterator[list[int]]:
    """Count the calls of ``module.name``, the framework's own builder."""
    calls = [0]
    real = getattr(module, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    setattr(module, name, counting)
    try:
        yield calls
    finally:
        setattr(module, name, real)


def test_langgraphs_tool_node_builds_each_stand_ins_schema_once(
        require_framework: Callable[[str], None]) -> None:
    require_framework("langgraph")
    from langchain_core.tools import structured
    from langgraph.prebuilt import ToolNode

    nodes = []
    with counted(structured, "create_schema_from_function") as built:
        for answer in ("first", "second"):
            with schemas_derived_once():
                node = ToolNode(stand_ins(answer))
                calls = {t.name: t.tool_call_schema for t in node.tools_by_name.values()}
                nodes.append((node, calls))
    (first, first_calls), (second, second_calls) = nodes
    assert built == [2]  # two tools, built by the first incarnation only
    mail = second.tools_by_name["send_mail"]
    assert mail.args_schema is first.tools_by_name["send_mail"].args_schema
    assert second_calls == first_calls
    # Each incarnation's tool still runs its own stand-in.
    assert mail.invoke({"to": "a@b.c", "subject": "s", "body": "b"}) == {"answer": "second"}


def test_a_kept_schema_keeps_no_incarnation_alive(
        require_framework: Callable[[str], None]) -> None:
    require_framework("langgraph")
    from langgraph.prebuilt import ToolNode

    with schemas_derived_once():
        functions = stand_ins("first")
        ToolNode(functions)
    gone = [weakref.ref(f) for f in functions]
    del functions
    gc.collect()
    assert [ref() for ref in gone] == [None, None]


@pytest.mark.parametrize("framework", ["langgraph", "agents"])
def test_a_kept_schema_of_the_agents_own_function_keeps_no_incarnation_alive(
        framework: str, require_framework: Callable[[str], None]) -> None:
    require_framework(framework)
    if framework == "langgraph":
        from langchain_core.tools import structured as builder_module
        builder = "create_schema_from_function"
    else:
        from agents import tool as builder_module
        builder = "function_schema"
    built = []
    with counted(builder_module, builder) as derived:
        for _ in range(2):
            functions = [fresh_tools().append_note]
            sys.modules.pop(TOOLS)
            delattr(sys.modules["examples.frameworks"], "tools")
            with schemas_derived_once():
                built.append(_tools_of(framework, functions))
            gone = weakref.ref(functions[0])
            del functions
            gc.collect()
            assert gone() is None
    assert derived == [1]
    assert built[0] == built[1]


def _tools_of(framework: str, functions: list[Callable[..., Any]]) -> list[object]:
    """What ``framework`` hands the model for ``functions``: each tool's JSON schema."""
    if framework == "langgraph":
        from langgraph.prebuilt import ToolNode
        return [t.tool_call_schema.model_json_schema()
                for t in ToolNode(functions).tools_by_name.values()]
    from agents import function_tool
    return [function_tool(f).params_json_schema for f in functions]


def test_the_openai_agents_sdks_function_tool_builds_each_schema_once(
        require_framework: Callable[[str], None]) -> None:
    require_framework("agents")
    from agents import function_tool
    from agents import tool as agents_tool

    made = []
    with counted(agents_tool, "function_schema") as built:
        for answer in ("first", "second"):
            with schemas_derived_once():
                made.append([function_tool(f) for f in stand_ins(answer)])
    first, second = made
    assert built == [2]
    assert [t.params_json_schema for t in second] == [t.params_json_schema for t in first]
    # What each incarnation was given is its own to change.
    assert second[0].params_json_schema is not first[0].params_json_schema
