"""An e-mail assistant on the official ``openai`` SDK (``examples.openai_agent:main``)."""

from examples.openai_agent.agent import main

__all__ = ["main"]
