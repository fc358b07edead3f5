"""Real models' prices come from genai-prices' shipped table, read as of one fixed day."""

from __future__ import annotations

from decimal import Decimal

import pytest

from fakes import UsageBuckets, cost, has_price, price_of
from harness import ConfigError


@pytest.mark.parametrize(("model", "uncached", "cache_read", "output"), [
    ("gpt-4o-mini", "0.15", "0.075", "0.6"),
    ("claude-sonnet-4-5", "3", "0.3", "15"),   # the base tier, not the long-context one
    ("gemini-2.5-flash", "0.3", "0.03", "2.5"),
])
def test_the_current_models_of_the_dialects_have_their_providers_prices(
        model: str, uncached: str, cache_read: str, output: str) -> None:
    price = price_of(model)
    assert (price.uncached_input, price.cache_read, price.output) == \
        (Decimal(uncached), Decimal(cache_read), Decimal(output))


def test_anthropic_cache_writes_cost_more_than_input_and_an_hour_twice_it() -> None:
    price = price_of("claude-haiku-4-5")
    assert (price.uncached_input, price.cache_write_5m, price.cache_write_1h) == \
        (Decimal(1), Decimal("1.25"), Decimal(2))


def test_a_real_model_has_a_cost_and_an_unknown_one_none() -> None:
    usage = UsageBuckets(uncached_input=1_000_000, output=1_000_000)
    assert cost("gpt-4o-mini", usage) == Decimal("0.75")
    assert has_price("gpt-4o-mini")
    assert not has_price("my-private-finetune")
    with pytest.raises(ConfigError, match="or a model genai-prices knows"):
        price_of("my-private-finetune")


def test_a_table_of_ones_own_is_all_that_prices_with_it() -> None:
    # A table passed in is the whole table: a real model not in it has no price there.
    own = {"fake-gpt": price_of("fake-gpt")}
    with pytest.raises(ConfigError):
        price_of("gpt-4o-mini", own)
