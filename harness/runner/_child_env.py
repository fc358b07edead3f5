"""What a child process of a ``subprocess`` tool received, judged by name (env:children).

Seed 000 §5: shell, background jobs, hooks and MCP children run with a cleaned
environment, so credentials never reach a process that has no use for them. The world
starts the child with what the agent handed it (``ToolContext.env``, or the ``env``
argument of a tool function standing in for a target), so it sees every variable the
child got. Only names reach the trace; a value is compared here and dropped.

>>> unwanted_variables({"PATH": "/bin", "OPENAI_API_KEY": "k", "BUILD_TOKEN": "t"},
...                    declared=("BUILD_TOKEN",))
('OPENAI_API_KEY: a model provider variable (the agent model client reads it)',)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from harness._redact import is_secret_name
from harness.intercept import FAKE_API_KEY, PROVIDER_ENVIRONMENT
from harness.ports import ToolContext
from harness.trace import ChildEnvironment

_HARNESS_PREFIX = "HARNESS_"


def unwanted_variables(received: Mapping[str, str], declared: Iterable[str] = ()
                       ) -> tuple[str, ...]:
    """The variables of ``received`` a child should not have had, each "NAME: why".

    A variable the scenario declares for the tool (``env:``) is the child's to have.
    """
    allowed = set(declared)
    found = []
    for name, value in sorted(received.items()):
        why = None if name in allowed else _why_unwanted(name, value)
        if why is not None:
            found.append(f"{name}: {why}")
    return tuple(found)


def _why_unwanted(name: str, value: str) -> str | None:
    if name in PROVIDER_ENVIRONMENT:
        return "a model provider variable (the agent model client reads it)"
    if value == FAKE_API_KEY:
        return "holds the model provider's API key under another name"
    if name.upper().startswith(_HARNESS_PREFIX):
        return "a setting of the harness"
    if is_secret_name(name):
        return "a secret-looking name the scenario does not declare for this tool"
    return None


def child_environment_record(seq: int, tool: str, context: ToolContext,
                             received: Mapping[str, str], declared: Iterable[str]
                             ) -> ChildEnvironment:
    """The trace's record of what one child received (the unwanted names only)."""
    return ChildEnvironment(seq, tool, context.invocation.call_id, context.incarnation,
                            context.env is not None, unwanted_variables(received, declared))
