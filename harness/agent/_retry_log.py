"""Retry events and the log they are persisted to (S7).

Seed 002 §19.1 (dsh): "在真正睡眠前追加一条 retry 事件,等待结束、准备再次请求时再追加
retry-started" — a ``retry_scheduled`` event is recorded *before* the backoff
sleep and a ``retry_started`` event when the next attempt begins, each with its
layer ("日志还要写清 retryLayer") and attempt id. After a crash the counters
resume from the last matching event instead of starting again at zero; each
event therefore carries the budget's state as it was then.

:class:`RetryLog` is a port: the journal layer implements it durably; the
in-memory :class:`MemoryRetryLog` serves tests and single-process runs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol, TypeAlias, final

from harness.agent._classify import RetryLayer

RetryEventKind: TypeAlias = Literal["retry_scheduled", "retry_started"]


@dataclass(frozen=True, slots=True)
class RetryEvent:
    """One line of the retry log.

    ``attempt_id`` is the failed attempt for ``retry_scheduled`` and the new
    attempt for ``retry_started`` (then ``previous_attempt_id`` names the failed
    one). ``retry_number`` counts retries of ``policy_key`` at ``layer`` (1 for the
    first). ``attempts_used`` and ``deadline`` snapshot the shared budget so a
    restart resumes them. Times are virtual seconds.

    >>> event = RetryEvent("retry_scheduled", "transport", "openai:/v1/chat/completions",
    ...                    "att_1", None, 1, 30.0, 2.0, "transient idle_timeout", 1, 600.0)
    >>> event.to_json()["kind"]
    'retry_scheduled'
    """

    kind: RetryEventKind
    layer: RetryLayer
    policy_key: str
    attempt_id: str
    previous_attempt_id: str | None
    retry_number: int
    at: float
    delay: float
    reason: str
    attempts_used: int
    deadline: float | None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready mapping with a stable key order (for journals and traces)."""
        return asdict(self)

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> RetryEvent:
        """Rebuild an event from :meth:`to_json` output (after a restart)."""
        return cls(**record)


class RetryLog(Protocol):
    """Where retry events go; ``record`` returns once the event is persisted."""

    def record(self, event: RetryEvent) -> None: ...


@final
class MemoryRetryLog:
    """A :class:`RetryLog` kept in memory, in order.

    >>> log = MemoryRetryLog()
    >>> log.events
    []
    """

    def __init__(self) -> None:
        self.events: list[RetryEvent] = []

    def record(self, event: RetryEvent) -> None:
        self.events.append(event)
