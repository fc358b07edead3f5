"""Two "releases" of the reference agent for the release-comparison demonstration.

Both send the same long, stable system prompt and mark Anthropic cache
breakpoints. The candidate stamps a volatile value (a request number, as a
timestamp or a request id would be) at the TOP of its system prompt, the
classic prompt-cache regression: every
request's prefix differs from the one before, so the provider's cache misses
with ``prefix_changed:system`` and the input is billed uncached (seed 002 §19.7).

Run them as two releases and compare::

    harness run scenarios/cache --agent harness.examples.releases:baseline --out results/baseline
    harness run scenarios/cache --agent harness.examples.releases:volatile_system_prompt \\
        --out results/candidate
    harness compare results/baseline results/candidate
"""

from __future__ import annotations

from harness.agent import ReferenceAgent
from harness.ports import Agent, AgentPorts

_RULES = (
    "Read the task carefully and restate the goal in one sentence before acting.",
    "Prefer reading the real state of files, outboxes and stores over guessing.",
    "Never repeat an operation whose outcome is unknown; inspect the state first.",
    "Send each message exactly once, and say so when a message was already sent.",
    "Keep tool arguments small, explicit and valid JSON objects.",
    "When a tool fails twice with the same error, stop and explain the failure.",
    "Report what was done, what was checked, and what remains, in plain words.",
    "Do not invent results for tools that did not return.",
)

#: A stable system prompt long enough to be cacheable (well above 1,024 tokens).
SYSTEM_PROMPT = "You are a careful operations agent.\n" + "\n".join(
    f"Rule {number}.{index}: {rule}"
    for number in range(1, 9)
    for index, rule in enumerate(_RULES, start=1)
)


def baseline(ports: AgentPorts) -> Agent:
    """The baseline release: a stable system prompt, cache breakpoints marked."""
    return ReferenceAgent(ports, system=SYSTEM_PROMPT, cache_breakpoints=True)


def volatile_system_prompt(ports: AgentPorts) -> Agent:
    """The candidate release: the same prompt, with a request number stamped on top."""
    requests = 0

    def stamped(current: AgentPorts) -> str:
        nonlocal requests
        requests += 1
        return f"Request {current.incarnation}.{requests}\n{SYSTEM_PROMPT}"

    return ReferenceAgent(ports, system=stamped, cache_breakpoints=True)
