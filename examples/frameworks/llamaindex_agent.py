"""A mail assistant on LlamaIndex, as its agent docs show for a function-calling agent.

``FunctionAgent`` with the plain functions as tools on the ``LiteLLM`` model class
(``llama-index-llms-litellm``; LlamaIndex's own OpenAI class pins ``openai<3``), which
reads ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` through litellm.
"""

from __future__ import annotations

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.llms.litellm import LiteLLM

from examples.frameworks import tools

agent = FunctionAgent(
    tools=[tools.send_mail, tools.append_note, tools.read_outbox],
    llm=LiteLLM(model="openai/gpt-4o-mini"),
    system_prompt="You are an office assistant. Use the tools to send mail and keep notes.",
)


async def main(prompt: str) -> str:
    response = await agent.run(prompt)
    return str(response)
