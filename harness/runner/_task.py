"""From a scenario to the :class:`~harness.ports.Task` an agent is given.

Each tool kind gets a JSON Schema of the arguments the fake tool reads
(``fakes.WorldTool``): ``append`` reads ``text``, ``send`` a message with an
optional ``idempotency_key``, ``put`` a ``key`` and ``value``; ``read`` and
``inspect`` take nothing. Extra properties are allowed, since a scenario's
scripted calls may carry more than the tool reads.

>>> task_for(Scenario(name="x", dialect="openai", model=[{"turn": 1, "text": "hi"}],
...                   expect={"stop_state": "complete"})).max_turns
20
"""

from __future__ import annotations

from typing import Any, Final

import fakes
from harness.ports import Task, ToolSpec, UsagePrices
from harness.scenario import Scenario

_STRING: Final = {"type": "string"}
TOOL_PARAMETERS: Final[dict[str, dict[str, Any]]] = {
    "append": {"type": "object", "properties": {"text": _STRING}},
    "send": {"type": "object",
             "properties": {"to": _STRING, "body": _STRING, "idempotency_key": _STRING}},
    "put": {"type": "object", "properties": {"key": _STRING, "value": {}}, "required": ["key"]},
    "read": {"type": "object", "properties": {}},
    "inspect": {"type": "object", "properties": {}},
}
JOB_PARAMETERS: Final[dict[str, Any]] = {"type": "object", "properties": {}}
JOB_DESCRIPTION: Final = ("Run a long job (a build, a test suite) and return its output and "
                          "exit code.")
_DESCRIPTIONS: Final = {
    "append": "Append a line of text to the notes file (not idempotent).",
    "send": "Send a message (not idempotent: sending twice sends two messages).",
    "put": "Set store[key] = value (idempotent).",
    "read": "Read the real state of the notes, the outbox and the store.",
    "inspect": "Inspect the real state before repeating an operation whose outcome is unknown.",
}


def tool_specs(scenario: Scenario) -> tuple[ToolSpec, ...]:
    """One :class:`~harness.ports.ToolSpec` per declared tool, in declaration order."""
    return tuple(
        ToolSpec(name, _DESCRIPTIONS[spec.kind], TOOL_PARAMETERS[spec.kind],
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
        prices=_prices(scenario.provider.model),
        context_window=scenario.provider.context_window,
        output_ceiling=scenario.provider.max_output_tokens,
    )


def _prices(model: str) -> UsagePrices | None:
    """The model's list price (:func:`fakes.price_of`), as the agent's cost budget reads it."""
    if not fakes.has_price(model):
        return None  # an unpriced model: a scenario with a cost budget names a priced one
    price = fakes.price_of(model)
    return UsagePrices(float(price.uncached_input), float(price.cache_read), float(price.output))
