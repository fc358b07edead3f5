"""Example agents written the way people write them, with no harness code inside.

Each one is a plain ``main(prompt) -> str`` on an official SDK or a framework, run
unchanged by ``harness run ... --agent examples.<name>:main``. ``openai_agent``,
``anthropic_agent`` and ``pydantic_ai_agent`` are first versions with the bugs first
versions have; ``openai_careful`` is the same agent written carefully. See README.md.
"""
