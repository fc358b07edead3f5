"""The agent contract lives in the neutral layer (:mod:`harness.ports`), not in the reference agent.

Loading scenarios needs the stop states and nothing of the reference agent; a fresh
interpreter shows what an import really pulls in, which a test process that already
imported everything cannot.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import harness.agent
import harness.ports

CONTRACT = (
    "STOP_STATES", "Agent", "AgentFactory", "AgentOutcome", "AgentPorts", "RecoveryReport",
    "StopState", "Task", "ToolCallView", "ToolSpec", "TranscriptMessage", "Usage", "UsagePrices",
    # The words and wire facts both sides read: how a reply and a finish are named, the
    # headers naming an attempt, the SSE decoder and the reading of Retry-After.
    "REPLY_STATUSES", "REPLY_STATUS_MEANINGS", "ReplyStatus", "FINISH_REASONS",
    "WITHHELD_FINISHES", "FinishReason", "ATTEMPT_ID_HEADER", "RETRY_LAYER_HEADER",
    "SSEDecoder", "SSEEvent", "parse_retry_after",
)

#: The reference agent's face: the agent, its settings (with the job supervisor and cancel
#: router it is built with), and the parts the harness reuses (its stream client and what
#: that returns, its request bodies and accumulators per dialect). A new name is a choice.
REFERENCE_AGENT = {
    "ReferenceAgent", "StreamConfig", "GuardLimits", "BreakerConfig", "CompactionConfig",
    "BudgetPolicy", "Discipline", "JobSupervisor", "JobEntry", "CancelRouter",
    "StreamClient", "Budget", "MemoryRetryLog", "CompletionResult", "StreamFailure",
    "AGENT_DIALECTS", "opening_request", "sent_request",
}


def _agent_modules_loaded_by(module: str) -> str:
    code = (f"import {module}, sys; "
            "print(sorted(m for m in sys.modules if m.startswith('harness.agent')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return done.stdout.strip()


@pytest.mark.parametrize("module", ["harness.scenario", "harness.ports"])
def test_loading_scenarios_and_the_ports_loads_no_reference_agent_module(module: str) -> None:
    assert _agent_modules_loaded_by(module) == "[]"


@pytest.mark.parametrize("name", CONTRACT)
def test_the_contract_is_exported_by_the_ports_and_not_by_the_reference_agent(name: str) -> None:
    assert name in harness.ports.__all__
    assert name not in harness.agent.__all__


def test_the_reference_agent_exports_itself_its_settings_and_the_parts_reused() -> None:
    assert set(harness.agent.__all__) == REFERENCE_AGENT
