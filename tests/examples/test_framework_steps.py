"""LlamaIndex's workflows look a framework class's steps up once per worker, an agent's class anew.

``Workflow._get_steps`` runs ``inspect.getmembers`` over the workflow for every step it
runs; :func:`~harness.intercept._frameworks.steps_found_once` works the step names of
the framework's own classes out once, per class (see :mod:`harness.intercept._frameworks`).
Here a ``FunctionAgent`` of two incarnations, an agent's own workflow class, a changed
class and the memo's hold on classes are checked against the framework's own lookup.
LlamaIndex's tool schemas are kept like the other frameworks' (``create_schema_from_function``).
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

from harness.intercept import _frameworks
from harness.intercept._frameworks import schemas_derived_once, steps_found_once

pytestmark = [pytest.mark.system, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

TOOLS = "examples.frameworks.tools"


@pytest.fixture
def workflows(require_framework: Callable[[str], None]) -> ModuleType:
    require_framework("llama_index")
    from workflows import workflow

    return workflow


@contextmanager
def counted_getmembers(module: ModuleType) -> Iterator[list[int]]:
    """Count the framework's full lookups (``inspect.getmembers`` over an instance)."""
    calls = [0]
    real = module.get_steps_from_instance

    def counting(instance: object) -> Any:
        calls[0] += 1
        return real(instance)

    module.get_steps_from_instance = counting
    try:
        yield calls
    finally:
        module.get_steps_from_instance = real


def function_agent(tools: ModuleType) -> Any:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.llms.litellm import LiteLLM

    return FunctionAgent(tools=[tools.send_mail, tools.append_note],
                         llm=LiteLLM(model="openai/gpt-4o-mini"), system_prompt="assist")


def fresh_tools() -> ModuleType:
    sys.modules.pop(TOOLS, None)
    return importlib.import_module(TOOLS)


def test_a_function_agents_steps_are_looked_up_once_across_incarnations(
        workflows: ModuleType) -> None:
    from workflows.utils import get_steps_from_instance

    found = []
    with counted_getmembers(workflows) as looked:
        for _ in range(2):  # two incarnations: new tools, a new agent each
            with steps_found_once():
                agent = function_agent(fresh_tools())
                found.append((agent, [agent._get_steps() for _ in range(3)]))
    assert looked == [0]  # never the full lookup
    for agent, lookups in found:
        expected = {**get_steps_from_instance(agent), **type(agent)._step_functions}
        assert sorted(expected) == ["aggregate_tool_results", "call_tool", "init_run",
                                    "parse_agent_output", "run_agent_step", "setup_agent"]
        for steps in lookups:
            assert steps == expected  # the same bound methods, of this very agent
            assert all(step.__self__ is agent for step in steps.values())
    assert list(found[0][1][0]) == list(found[1][1][0])  # in the framework's order


def test_an_agents_own_workflow_class_is_looked_up_in_full_every_time(
        workflows: ModuleType) -> None:
    from workflows import Workflow, step
    from workflows.events import StartEvent, StopEvent

    def incarnation(extra: bool) -> type:
        """The agent's module imported afresh: its workflow class is a new class."""

        class Mine(Workflow):
            @step
            async def begin(self, ev: StartEvent) -> StopEvent:
                return StopEvent(result="done")

        if extra:  # the agent's code changed between two runs
            class Patch:
                @step
                async def check(self, ev: StartEvent) -> StopEvent:
                    return StopEvent(result="checked")
            Mine.check = Patch.check  # type: ignore[attr-defined]
        return Mine

    with counted_getmembers(workflows) as looked, steps_found_once():
        first = incarnation(extra=False)()
        assert sorted(first._get_steps()) == ["begin"]
        second = incarnation(extra=True)()
        assert sorted(second._get_steps()) == ["begin", "check"]
        assert sorted(first._get_steps()) == ["begin"]
    assert looked == [5]  # two built (each looks its steps up), three looked up: all in full
    assert not any(cls.__module__ == __name__ for cls in _frameworks._STEP_NAMES)


def test_a_step_added_to_a_framework_class_is_found(workflows: ModuleType) -> None:
    from llama_index.core.agent.workflow import FunctionAgent
    from workflows import step
    from workflows.events import StartEvent, StopEvent

    agent = function_agent(fresh_tools())
    with steps_found_once():
        before = sorted(agent._get_steps())

        class Patch:
            @step
            async def audit(self, ev: StartEvent) -> StopEvent:
                return StopEvent(result="audited")

        FunctionAgent.audit = Patch.audit  # type: ignore[attr-defined]
        try:
            after = agent._get_steps()
        finally:
            del FunctionAgent.audit  # type: ignore[attr-defined]
        again = sorted(agent._get_steps())
    assert sorted(after) == sorted([*before, "audit"])
    assert after["audit"].__self__ is agent
    assert again == before


def test_a_step_the_instance_holds_itself_is_found(workflows: ModuleType) -> None:
    from workflows.utils import get_steps_from_instance

    agent, other = function_agent(fresh_tools()), function_agent(fresh_tools())
    object.__setattr__(agent, "borrowed", other.run_agent_step)
    with steps_found_once():
        steps = agent._get_steps()
    assert steps == get_steps_from_instance(agent)
    assert steps["borrowed"].__self__ is other


def test_the_memo_keeps_no_workflow_alive(workflows: ModuleType) -> None:
    agent = function_agent(fresh_tools())
    with steps_found_once():
        agent._get_steps()
    gone = weakref.ref(agent)
    del agent
    gc.collect()
    assert gone() is None
    # What is kept: the framework's class, and names.
    for cls, (_, names) in _frameworks._STEP_NAMES.items():
        assert cls.__module__.startswith("llama_index.")
        assert all(type(name) is str for name in names)


def test_a_function_agents_tool_schemas_are_built_once(
        require_framework: Callable[[str], None]) -> None:
    require_framework("llama_index")
    from llama_index.core.tools import function_tool

    made = []
    real = function_tool.create_schema_from_function
    calls = [0]

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    function_tool.create_schema_from_function = counting
    try:
        for _ in range(2):
            tools = fresh_tools()
            with schemas_derived_once():
                made.append(function_agent(tools).tools)
    finally:
        function_tool.create_schema_from_function = real
    first, second = made
    assert calls == [2]  # two tools, by the first incarnation only
    assert [t.metadata.fn_schema for t in second] == [t.metadata.fn_schema for t in first]
    assert [t.metadata.get_parameters_dict() for t in second] == \
        [t.metadata.get_parameters_dict() for t in first]
    assert second[0].fn is not first[0].fn  # each incarnation calls its own function
