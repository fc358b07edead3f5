"""The record tests share a loopback upstream (``loopback.py``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from loopback import Upstream, serve


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    yield from serve(Upstream())
