"""An e-mail assistant on the official ``anthropic`` SDK (``examples.anthropic_agent:main``)."""

from examples.anthropic_agent.agent import main

__all__ = ["main"]
