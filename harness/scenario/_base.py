"""The base every scenario model shares: strict, closed, frozen, documented."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ScenarioModel(BaseModel):
    """Plain typed data: unknown keys are errors, nothing is coerced, nothing changes.

    Strict because YAML already has types: ``seed: "7"`` is a mistake worth
    reporting, not a string to convert. Attribute docstrings become the JSON
    Schema's descriptions, so an editor shows the same words as the code.
    Mutable defaults (``= []``) are safe here, pydantic copies them per
    instance, and unlike ``default_factory`` they appear in the schema.
    """

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=True,
        allow_inf_nan=False,
        use_attribute_docstrings=True,
    )
