"""The committed JSON Schema is the models' schema, and it judges files as the loader does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from harness.scenario import (
    FAULT_KINDS,
    SCHEMA_PATH,
    ScenarioError,
    load_scenario,
    scenario_json_schema,
)
from harness.scenario._schema import schema_text

jsonschema = pytest.importorskip("jsonschema")

GOOD = Path(__file__).parent / "data" / "good"
BAD = Path(__file__).parent / "data" / "bad"


def committed_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return schema


def test_the_committed_schema_is_the_generated_one() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text(), (
        "harness/scenario/scenario.schema.json is stale; regenerate it with "
        "`python -m harness.scenario schema` and commit the result"
    )


def test_the_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(committed_schema())


def test_the_schema_is_closed_documented_and_lists_every_fault_kind() -> None:
    schema = scenario_json_schema()
    definitions = schema["$defs"]
    assert schema["additionalProperties"] is False
    assert all(d.get("additionalProperties") is False for d in definitions.values()
               if d.get("type") == "object")
    assert schema["properties"]["seed"]["default"] == 0
    assert schema["properties"]["dialect"]["enum"] == ["openai", "anthropic", "openai-responses",
                                                      "gemini"]
    assert "description" in schema["properties"]["model"]
    mapping = schema["properties"]["faults"]["items"]["discriminator"]["mapping"]
    assert sorted(mapping) == sorted(FAULT_KINDS)


def _yaml(path: Path) -> object:
    return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", sorted(GOOD.glob("*.yaml")), ids=lambda p: p.stem)
def test_good_examples_satisfy_the_committed_schema(path: Path) -> None:
    jsonschema.validate(_yaml(path), committed_schema())


@pytest.mark.parametrize("path", sorted(BAD.glob("*.yaml")), ids=lambda p: p.stem)
def test_bad_examples_break_the_committed_schema(path: Path) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(_yaml(path), committed_schema())


@pytest.mark.parametrize("path", sorted(BAD.glob("*.yaml")), ids=lambda p: p.stem)
def test_the_loader_agrees_with_the_schema_on_bad_examples(path: Path) -> None:
    with pytest.raises(ScenarioError, match=rf"^{path}:\d+:\d+: "):
        load_scenario(path)
