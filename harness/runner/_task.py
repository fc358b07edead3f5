"""From a scenario to the :class:`~harness.ports.Task` an agent is given.

Each declared tool is offered with its kind's description and JSON Schema, from
:data:`harness.ports.TOOL_KIND_TRAITS`; a job tool with its own.

>>> task_for(Scenario(name="x", dialect="openai", model=[{"turn": 1, "text": "hi"}],
...                   expect={"stop_state": "complete"})).max_turns
20
"""

from __future__ import annotations

from typing import Any, Final

import fakes
from harness.ports import TOOL_KIND_TRAITS, TOOL_PARAMETERS, Task, ToolSpec, UsagePrices
from harness.scenario import Scenario

JOB_PARAMETERS: Final[dict[str, Any]] = {"type": "object", "properties": {}}
JOB_DESCRIPTION: Final = ("Run a long job (a build, a test suite) and return its output and "
                          "exit code.")


def tool_specs(scenario: Scenario) -> tuple[ToolSpec, ...]:
    """One :class:`~harness.ports.ToolSpec` per declared tool, in declaration order."""
    return tuple(
        ToolSpec(name, TOOL_KIND_TRAITS[spec.kind].description, TOOL_PARAMETERS[spec.kind],
                 spec.timeout_seconds, tuple(spec.secret))
        for name, spec in scenario.tools.items()
    ) + tuple(
        ToolSpec(name, JOB_DESCRIPTION, JOB_PARAMETERS, spec.timeout_seconds)
        for name, spec in scenario.jobs.items()
    )


def task_for(scenario: Scenario) -> Task:
    """The task: the scenario's description as the prompt, its budget and tools."""
    budget = scenario.budget
    return Task(
        prompt=scenario.description or f"Run scenario {scenario.name}.",
        model=scenario.provider.model,
        tools=tool_specs(scenario),
        max_turns=budget.max_turns,
        deadline_seconds=budget.deadline_seconds,
        max_attempts=budget.max_attempts,
        max_tokens=budget.max_tokens,
        max_cost_usd=budget.max_cost_usd,
        max_tool_calls=budget.max_tool_calls,
        max_jobs=budget.max_jobs,
        max_job_seconds=budget.max_job_seconds,
        max_job_output_lines=budget.max_job_output_lines,
        max_tool_result_chars=scenario.expect.max_tool_result_chars,
        after_tool_hook=scenario.hook.run if scenario.hook is not None else None,
        hook_max_depth=scenario.hook.max_depth if scenario.hook is not None else 1,
        prices=_prices(scenario.provider.model),
        context_window=scenario.provider.context_window,
        output_ceiling=scenario.provider.max_output_tokens,
        training_data=scenario.training_data,
        cache_breakpoints=scenario.cache_breakpoints,
        backup_model=scenario.provider.backup_model,
    )


def _prices(model: str) -> UsagePrices | None:
    """The model's list price (:func:`fakes.price_of`), as the agent's cost budget reads it."""
    if not fakes.has_price(model):
        return None  # an unpriced model: a scenario with a cost budget names a priced one
    price = fakes.price_of(model)
    return UsagePrices(float(price.uncached_input), float(price.cache_read), float(price.output))
