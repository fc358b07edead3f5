"""Placeholder until the pyfakefs layer lands."""
from __future__ import annotations

from contextlib import nullcontext
from typing import Any


class AgentFiles:
    def __init__(self, disk: Any, workdir: str = "/agent") -> None:
        self.disk = disk
        self.workdir = workdir

    def active(self, generation: int) -> Any:
        return nullcontext(generation)
