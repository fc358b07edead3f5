"""The metrics stream: usage per attempt and latency, allowed to lose records (J6).

Seed 002 §19.6 keeps run metrics apart from the trusted session record:
"运行指标写失败不应阻断 Agent" — a metrics write that fails is dropped and the
run goes on, and nothing is ever re-executed because a metric is missing. So a
:class:`MetricsSink` never raises into the loop: :class:`MemoryMetrics` keeps
records in memory, :class:`FileMetrics` appends JSON lines without fsync and
counts what it had to drop.

Example::

    metrics = MemoryMetrics()
    metrics.emit({"kind": "attempt", "attemptId": "att_1", "latency": 0.4})
    metrics.records[0]["attemptId"]      # 'att_1'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol, final

from harness._errors import DiskError
from harness.ports import Disk


class MetricsSink(Protocol):
    """Where metric records go; ``emit`` never raises (records may be dropped)."""

    def emit(self, record: Mapping[str, Any]) -> None: ...


@final
class MemoryMetrics:
    """Metric records kept in memory, in order.

    >>> m = MemoryMetrics(); m.emit({"kind": "turn"}); len(m.records)
    1
    """

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def emit(self, record: Mapping[str, Any]) -> None:
        self.records.append(dict(record))


@final
class FileMetrics:
    """Metric records appended to ``path`` on ``disk``, best effort (no fsync).

    The folder must exist (the session log creates it). A failed write is
    counted in :attr:`dropped` and otherwise ignored.
    """

    def __init__(self, disk: Disk, path: str) -> None:
        self._disk = disk
        self.path = path
        self.dropped = 0

    def emit(self, record: Mapping[str, Any]) -> None:
        line = json.dumps(record, separators=(",", ":"), default=str).encode() + b"\n"
        try:
            with self._disk.open_append(self.path) as handle:
                handle.write(line)
        except DiskError:
            self.dropped += 1
