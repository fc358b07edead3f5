"""An agent that re-executes a tool call whose outcome is unknown after a crash: broken.

Its journal says a call's execution started but never says it ended; on restart it
takes that call for one that never started and runs it again, so a mail sent just
before the crash goes out twice (seed 000 §2.1: a call still ``execution_started`` is
re-run blindly, and an append or a send happens twice). Everything else is the
reference agent, so this one bug is all a search can find in it. It is the catalogue's
``J4-unknown-as-not-started`` (``harness/mutants/``), under a name ``--agent`` can import.
Hand-written scenarios catch it only at the crash points they list; the fuzzer finds it
without being told where to look::

    harness fuzz scenarios/crash/unknown-send-is-inspected.yaml \\
        --agent examples.naive_resend_agent:agent --budget 200 --out fuzz
"""

from harness.mutants import MUTANTS
from harness.ports import AgentFactory

agent: AgentFactory = next(m.factory for m in MUTANTS if m.name == "J4-unknown-as-not-started")
"""The broken agent's factory over the ports (``--agent examples.naive_resend_agent:agent``)."""
