"""A mail assistant on DSPy, as its ReAct tutorial shows.

``dspy.LM("openai/gpt-4o-mini")`` (through litellm, its key and address from
``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``), ``dspy.configure(lm=...)``, and
``dspy.ReAct`` over a signature with the plain functions as its tools. ReAct asks the
model in DSPy's own text format (``[[ ## next_tool_name ## ]]`` …, its default
``ChatAdapter``), not by the API's tool calls; it runs each tool the model names until
the model picks ``finish``, then extracts the answer. DSPy's LM cache is on, as by
default.
"""

from __future__ import annotations

import dspy

from examples.frameworks import tools

lm = dspy.LM("openai/gpt-4o-mini")
dspy.configure(lm=lm)

agent = dspy.ReAct(
    "request -> answer",
    tools=[tools.send_mail, tools.append_note, tools.read_outbox],
)


async def main(prompt: str) -> str:
    result = await agent.acall(request=prompt)
    return str(result.answer)
