"""``examples.openai_agent`` written carefully (``examples.openai_careful:main``).

It uses the same tools: ``examples.openai_agent.tools``.
"""

from examples.openai_careful.agent import main

__all__ = ["main"]
