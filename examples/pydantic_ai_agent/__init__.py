"""An e-mail assistant built with pydantic-ai (``examples.pydantic_ai_agent:main``)."""

from examples.pydantic_ai_agent.agent import main

__all__ = ["main"]
