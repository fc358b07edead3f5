"""The agent's code meets Python's own warning filters, not the harness's host's."""

from __future__ import annotations

import warnings

from harness.runner import CaseResult

from .conftest import TOOLS, AgentPackages
from .test_plain_agent import mail_scenario, run

# A framework that still reads a deprecated attribute: its users see a warning printed
# once (or nothing, outside __main__), and the agent goes on.
DEPRECATED_READ = '''
import warnings


def main(prompt: str) -> str:
    warnings.warn("the `__fields__` attribute is deprecated", DeprecationWarning, stacklevel=1)
    warnings.warn("this will change", PendingDeprecationWarning, stacklevel=1)
    return "went on"
'''


def _run(agent_packages: AgentPackages) -> CaseResult:
    package = agent_packages.write({"tools": TOOLS, "agent": DEPRECATED_READ})
    scenario = mail_scenario(package, model=[{"turn": 1, "text": "Done."}],
                             expect={"stop_state": "complete"})
    return run(package, scenario)


def test_a_deprecation_warning_is_no_error_in_the_agent_under_pytests_error_filter(
        agent_packages: AgentPackages) -> None:
    # This project's pytest turns every warning into an error, as many users' do; the
    # pytest plugin's workers inherit it. The agent in production never meets it.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = _run(agent_packages)
        assert warnings.filters[0][0] == "error"  # the host's filters are back after it
    assert result.trace is not None
    assert result.stop_state == "complete", result.stop_reason
    assert "went on" in str(result.trace.extra.final_answer)
