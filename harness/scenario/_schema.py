"""The JSON Schema of the scenario format, generated from the models.

The committed ``scenario.schema.json`` beside this module lets editors complete
and check scenario files; a test keeps it equal to what the models generate.
Regenerate it with ``python -m harness.scenario schema``::

    >>> scenario_json_schema()["additionalProperties"]
    False
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from harness.scenario._model import Scenario

SCHEMA_PATH: Final = Path(__file__).with_name("scenario.schema.json")
SCHEMA_ID: Final = "https://llm-chaos-harness.invalid/scenario.schema.json"


def scenario_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) every scenario file must satisfy."""
    schema = Scenario.model_json_schema(mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **schema,
    }


def schema_text() -> str:
    """The schema as the committed file holds it: sorted keys, two-space indent, final newline."""
    return json.dumps(scenario_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_schema(path: Path = SCHEMA_PATH) -> Path:
    """Write :func:`schema_text` to ``path`` (the committed file by default)."""
    path.write_text(schema_text(), encoding="utf-8")
    return path
