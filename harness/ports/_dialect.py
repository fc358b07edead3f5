"""The wire dialects a provider speaks, named once for the agent core, the fakes and scenarios."""

from __future__ import annotations

from typing import Literal, get_args

Dialect = Literal["openai", "anthropic"]
DIALECTS: tuple[Dialect, ...] = get_args(Dialect)
