"""What a fault is lives in the neutral layer; what it does to a stream lives in the fakes.

Loading scenarios needs each fault's kind, fields and bounds, not the machinery that
renders, encodes and bends a provider's stream: a fresh interpreter shows what an import
really pulls in, which a test process that already imported everything cannot.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

import fakes
import harness.ports
import harness.scenario
from fakes._faults import ACTED_ON

# The fakes' modules that make, encode and bend a provider's stream.
STREAM_MODULES = (
    "fakes._cache", "fakes._dialects", "fakes._endpoints", "fakes._faults", "fakes._held",
    "fakes._httpx2_adapter", "fakes._input_items", "fakes._pairing", "fakes._provider",
    "fakes._respx_adapter", "fakes._script", "fakes._segments", "fakes._transport",
    "fakes._wire", "fakes._wire_anthropic", "fakes._wire_gemini", "fakes._wire_openai",
    "fakes._wire_responses",
)


def _fakes_modules_loaded_by(module: str) -> set[str]:
    code = (f"import {module}, sys; "
            "print('\\n'.join(m for m in sys.modules if m.split('.')[0] == 'fakes'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return set(done.stdout.split())


def test_the_stream_modules_named_here_exist() -> None:
    # A renamed module would otherwise leave the test below checking nothing.
    assert [m for m in STREAM_MODULES if importlib.util.find_spec(m) is None] == []


@pytest.mark.parametrize("module", ["harness.scenario", "fakes"])
def test_loading_scenarios_loads_no_stream_module_of_the_fakes(module: str) -> None:
    assert _fakes_modules_loaded_by(module) & set(STREAM_MODULES) == set()


def test_the_scenario_models_and_the_fakes_read_one_declaration_of_the_kinds() -> None:
    assert harness.scenario.FAULT_KINDS is harness.ports.FAULT_KINDS
    assert fakes.FAULT_KINDS is harness.ports.FAULT_KINDS
    assert fakes.Stall is harness.ports.Stall


@pytest.mark.parametrize("cls", [c for c in harness.ports.FAULT_TYPES
                                 if c.layer in ("frames", "bytes")],
                         ids=lambda c: c.kind)
def test_the_fakes_know_how_to_apply_every_frame_and_byte_fault(cls: type) -> None:
    assert cls in ACTED_ON
