"""Find a user's agent factory from a ``MODULE:ATTRIBUTE`` spec, as ``--agent`` names it.

    >>> load_agent_factory("harness.agent:ReferenceAgent").__name__
    'ReferenceAgent'
"""

from __future__ import annotations

import importlib
from typing import cast

from harness._errors import ConfigError
from harness.agent import AgentFactory

AGENT_SPEC_FORM = "MODULE:ATTRIBUTE, such as 'harness.agent:ReferenceAgent'"


def load_agent_factory(spec: str) -> AgentFactory:
    """Import ``MODULE`` and return its ``ATTRIBUTE``, a callable from ports to an agent."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ConfigError("--agent", spec, AGENT_SPEC_FORM)
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ConfigError("--agent", spec, AGENT_SPEC_FORM,
                          f"Module {module_name!r} cannot be imported: {error}") from error
    factory = getattr(module, attribute, None)
    if not callable(factory):
        public = sorted(name for name in vars(module) if not name.startswith("_"))
        raise ConfigError("--agent", spec, AGENT_SPEC_FORM,
                          f"{module_name} has no callable {attribute!r}; it has: "
                          + ", ".join(public[:12]))
    return cast(AgentFactory, factory)
