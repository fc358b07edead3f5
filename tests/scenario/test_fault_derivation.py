"""Each fault is declared once, by the fakes; the scenario's models are derived from it."""

from __future__ import annotations

import dataclasses

import pytest

import fakes
from harness.scenario._faults import FAULT_MODELS


@pytest.mark.parametrize("model", FAULT_MODELS, ids=lambda m: m.__name__)
def test_a_model_has_the_fake_fields_defaults_and_words(model: type) -> None:
    fake = fakes.FAULT_KINDS[model.model_fields["kind"].annotation.__args__[0]]
    declared = {f.name: f.default for f in dataclasses.fields(fake)}
    derived = {name: info.default for name, info in model.model_fields.items()
               if name not in {"kind", "at"}}
    assert list(derived) == list(declared)
    assert all(derived[name] == declared[name] for name in declared
               if declared[name] is not dataclasses.MISSING)
    assert all(model.model_fields[name].description for name in declared)
    assert model.__name__ == f"{fake.__name__}Fault"
    assert model.__doc__ == fake.summary


def test_the_broken_stream_faults_are_those_the_fakes_declare() -> None:
    broken = {"no_terminal_event", "error_in_stream", "malformed_frame", "empty_body"}
    assert broken == fakes.BROKEN_STREAM_FAULTS
