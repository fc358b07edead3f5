"""Scenario blocks for long runs: the model's context window, provider outages, the
circuit breaker a scenario expects, and the token and cost budgets.

They are plain validated data like the rest of the format; the world reads
``provider.context_window`` and ``provider.outages`` (:mod:`fakes._conditions`),
the agent's task reads the budgets, and the checks read ``expect.breaker``.

    >>> OutageDeclaration(start_seconds=5, end_seconds=200).answer
    503
"""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import Field, model_validator

from harness.ports import PRICES, OutageAnswer, has_price
from harness.scenario._base import ScenarioModel
from harness.scenario._faults import Count, Seconds
from harness.scenario._problems import Problem, did_you_mean, quoted, raise_if_any, show

#: Context windows the fake model may have: from a toy window to the largest real ones.
ContextWindowTokens = Annotated[int, Field(ge=16, le=10_000_000)]
TimePoint = Annotated[float, Field(ge=0, le=1e9)]
#: A model name as requests carry it: the provider's model, its backup, an outage's model.
ModelName = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._:-]+$")]


class OutageDeclaration(ScenarioModel):
    """A window of virtual time in which the provider is down (seed 002 §19.1, 熔断)."""

    start_seconds: TimePoint
    """Virtual time the outage begins (inclusive)."""
    end_seconds: TimePoint
    """Virtual time the provider answers again (exclusive)."""
    answer: OutageAnswer = 503
    """What every request meets meanwhile: 500, 502, 503, 529, connection_reset, or stall
    (the stream's headers, then silence until the client gives up)."""
    model: ModelName | None = None
    """Only requests naming this model meet the outage (one model overloaded, as a 529 is);
    absent: every request. It names ``provider.model`` or ``provider.backup_model``."""

    @model_validator(mode="after")
    def _ends_after_start(self) -> Self:
        if self.end_seconds <= self.start_seconds:
            raise_if_any([Problem(("end_seconds",), "the outage ends before it starts",
                                  self.end_seconds, show(self.end_seconds),
                                  f"a time after start_seconds ({self.start_seconds:g})")])
        return self


class BreakerExpectation(ScenarioModel):
    """The circuit breaker a correct agent keeps, as the ``breaker`` check judges it.

    Seed 002 §19.1: "Closed 正常放行并统计失败率;达到最小样本数且错误率超过阈值后进入
    Open,直接拒绝;冷却期后进入 HalfOpen,只允许少量探测".
    """

    failures_to_open: Count = 3
    """Consecutive failed requests after which the breaker must be open."""
    cooldown_seconds: Seconds = 30
    """How long an open breaker lets no request through before one half-open probe."""


def outage_model_problems(outages: list[OutageDeclaration], model: str,
                          backup: str | None) -> list[Problem]:
    """An outage scoped to a model no request names never strikes: say so at its line."""
    named = [model] if backup is None else [model, backup]
    return [Problem(("provider", "outages", index, "model"), "no request names this model",
                    outage.model, show(outage.model),
                    f"the provider's model or its backup: {quoted(named)}",
                    did_you_mean(outage.model, named) or "Name provider.model (the primary) "
                    "or provider.backup_model, or drop 'model' to fail every request")
            for index, outage in enumerate(outages)
            if outage.model is not None and outage.model not in named]


def backup_model_problems(model: str, backup: str | None) -> list[Problem]:
    """A backup that is the primary itself is no second route."""
    if backup is None or backup != model:
        return []
    return [Problem(("provider", "backup_model"), "the backup model is the primary model",
                    backup, show(backup), "a model other than provider.model",
                    "Name another model, or drop backup_model: switching to the same model "
                    "is one more retry of it")]


def unpriced_cost_budget(max_cost_usd: float | None, model: str) -> list[Problem]:
    """A cost budget needs a model with a list price, or nothing could ever be charged."""
    if max_cost_usd is None or has_price(model):
        return []
    return [Problem(("budget", "max_cost_usd"), "a cost budget needs a priced model", model,
                    f"provider.model {show(model)}",
                    f"{quoted(sorted(PRICES))}, or a real model genai-prices knows",
                    "Name one as provider.model, price yours with --prices FILE, or drop "
                    "max_cost_usd")]
