"""A mail assistant on the Anthropic SDK's own tool loop, as its tool-use docs show.

``client.beta.messages.tool_runner`` with ``beta_tool``-wrapped functions: the SDK
sends, runs the tools the model asks for, sends their results back, and stops at the
first answer without a tool call. ``Anthropic()`` reads ``ANTHROPIC_API_KEY`` and
``ANTHROPIC_BASE_URL``.
"""

from __future__ import annotations

from anthropic import Anthropic, beta_tool

from examples.frameworks import tools

client = Anthropic()


def main(prompt: str) -> str:
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-4-5",
        max_tokens=1024,
        system="You are an office assistant. Use the tools to send mail and keep notes.",
        tools=[beta_tool(tools.send_mail), beta_tool(tools.append_note),
               beta_tool(tools.read_outbox)],
        messages=[{"role": "user", "content": prompt}],
    )
    final = runner.until_done()
    return "".join(block.text for block in final.content if block.type == "text")
