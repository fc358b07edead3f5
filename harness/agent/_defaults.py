"""Every default of the reference stream client, in one place, with its reason.

Change a number here and the reason beside it should change too. Sources:
seed 002 §19.1 (the four implementations' retry policies) and seed 002
"自建起步" (the seven design decisions of a watchdog-guarded streaming call).

>>> StreamConfig().idle_timeout
30.0
>>> StreamConfig(max_attempts=0)
Traceback (most recent call last):
...
harness.ConfigError: max_attempts: got 0; expected an integer >= 1
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from harness._errors import ConfigError
from harness.ports import CALENDAR_ORIGIN_UNIX


@dataclass(frozen=True, slots=True)
class StreamConfig:
    """Timeouts, retry policy and budgets of :class:`StreamClient` (seconds, virtual time)."""

    # Seed 002 "自建起步" ①: "超过阈值(如 30s)判定卡死" — no chunk for 30 s on an
    # open stream means it is stuck; abort and treat as a transient transport error.
    idle_timeout: float = 30.0
    # Seed 002 "自建起步" ①: connecting and waiting for the first byte is a separate
    # phase from the idle gap between chunks. A model may think before its first
    # token (long prompts, reasoning), so this is longer than the idle watchdog.
    first_byte_timeout: float = 60.0
    # Seed 002 §19.1: grok-build defaults to at most 15 attempts, dsh to 5 retries.
    # This is the transport layer's *local* cap per request; the shared Budget
    # caps all layers together (S8).
    max_attempts: int = 6
    # Seed 002 §19.1, grok-build: "普通退避大致为 2、4、8、16 秒,之后封顶在约 30 秒
    # 并加入随机抖动".
    backoff_base: float = 2.0
    backoff_factor: float = 2.0
    backoff_cap: float = 30.0
    # Share of each backoff removed at random (seeded): 0.2 turns 8 s into 6.4 to 8 s,
    # enough to spread a herd of clients, never above the cap.
    backoff_jitter: float = 0.2
    # Seed 002 §19.1, pi: a server asking to wait longer than 60 s gets its error
    # surfaced instead ("让上层和用户决定是否继续,比一个不可见的长等待更可控").
    retry_after_cap: float = 60.0
    # Seed 002 "自建起步" ⑤: grok limits consecutive 429s; after this many in a row
    # the rate limit is reported rather than waited out again.
    max_consecutive_429: int = 3
    # Seed 002 §19.1: every layer consumes one parent deadline ("共享一个父级截止时间"),
    # so four layers of three retries cannot multiply into 81 attempts.
    overall_deadline: float = 600.0
    # Attempts the shared budget allows across all layers (transport, request,
    # tool, task) when the client creates the budget itself.
    budget_attempts: int = 30
    # Seed 002 "自建起步" ⑥ and §19.1 ①: plain text cut by max_tokens may be
    # continued, at most once; a second continuation would hide a runaway answer.
    max_continuations: int = 1
    # Seed 002 §19.1 (grok-build, DoomLoop: 换法重采样): a looping answer is dropped as it
    # streams and resampled at another temperature, at most this many times per request;
    # ``detect_loops`` off reads a loop to its end as any other answer.
    detect_loops: bool = True
    max_resamples: int = 2
    # Seed 002 §19.1 ① level 1: an answer cut at the output limit, not yet committed, is
    # asked for again with the model's ceiling (Task.output_ceiling) when it allows more;
    # then level 2 or 3 takes over. Off: straight to level 2 or 3.
    raise_output_limit: bool = True
    # Unix time of virtual t=0: lets an HTTP-date ``Retry-After`` be compared with
    # the virtual now (the fakes' calendar origin).
    clock_epoch_unix: float = CALENDAR_ORIGIN_UNIX

    def __post_init__(self) -> None:
        for name in (
            "idle_timeout",
            "first_byte_timeout",
            "backoff_base",
            "backoff_cap",
            "retry_after_cap",
            "overall_deadline",
        ):
            _require(name, getattr(self, name), minimum=0.0, exclusive=True)
        _require("backoff_factor", self.backoff_factor, minimum=1.0)
        _require("backoff_jitter", self.backoff_jitter, minimum=0.0, maximum=1.0)
        _require("clock_epoch_unix", self.clock_epoch_unix, minimum=0.0)
        for name in ("max_attempts", "max_consecutive_429", "budget_attempts"):
            _require_int(name, getattr(self, name), minimum=1)
        _require_int("max_continuations", self.max_continuations, minimum=0)
        _require_int("max_resamples", self.max_resamples, minimum=0)

    def describe(self) -> dict[str, float | int]:
        """The settings as a plain mapping (for reports and replay lines)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _require(
    name: str,
    value: object,
    *,
    minimum: float,
    exclusive: bool = False,
    maximum: float | None = None,
) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if ok:
        assert isinstance(value, int | float)
        ok = (value > minimum if exclusive else value >= minimum) and (
            maximum is None or value <= maximum
        )
    if not ok:
        bound = f"> {minimum}" if exclusive else f">= {minimum}"
        if maximum is not None:
            bound += f" and <= {maximum}"
        raise ConfigError(name, value, f"a finite number {bound} (seconds for durations)")


def _require_int(name: str, value: object, *, minimum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ConfigError(name, value, f"an integer >= {minimum}")
