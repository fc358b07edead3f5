"""The dated price table: exact costs of known usage, per bucket."""

from __future__ import annotations

from decimal import Decimal

import pytest

from fakes import PRICES, CacheOutcome, UsageBuckets, cost, price_of
from harness import ConfigError


def test_cost_of_a_known_anthropic_usage() -> None:
    usage = UsageBuckets(uncached_input=1_000, cache_read=100_000, cache_write_5m=10_000,
                         cache_write_1h=2_000, output=500)
    # fake-sonnet: $3 in, $0.30 read, $3.75 write 5m, $6 write 1h, $15 out per million.
    assert cost("fake-sonnet", usage) == Decimal("0.003") + Decimal("0.03") + Decimal(
        "0.0375") + Decimal("0.012") + Decimal("0.0075")


def test_cost_of_a_known_openai_usage() -> None:
    usage = UsageBuckets(uncached_input=1_000, cache_read=2_000, output=500)
    assert cost("fake-gpt", usage) == Decimal("0.007")


def test_buckets_from_an_outcome_never_count_cached_tokens_twice() -> None:
    outcome = CacheOutcome(input_tokens=1506, cache_read_tokens=1408)
    buckets = outcome.buckets(output_tokens=10)
    assert (buckets.uncached_input, buckets.cache_read, buckets.input_tokens) == (98, 1408, 1506)
    assert cost("fake-gpt-mini", buckets) == (98 * Decimal("0.15") + 1408 * Decimal("0.075")
                                              + 10 * Decimal("0.60")) / 1_000_000


def test_cache_multipliers_follow_the_published_ratios() -> None:
    for name in ("fake-opus", "fake-sonnet", "fake-haiku"):
        price = PRICES[name]
        assert price.cache_read == price.uncached_input / 10
        assert price.cache_write_5m == price.uncached_input * Decimal("1.25")
        assert price.cache_write_1h == price.uncached_input * 2


def test_a_dated_snapshot_prices_like_its_family_and_an_unknown_model_is_refused() -> None:
    assert price_of("fake-haiku-20261001") is PRICES["fake-haiku"]
    assert price_of("fake-gpt-mini-2026") is PRICES["fake-gpt-mini"]
    with pytest.raises(ConfigError, match=r"^model: got 'gpt-9'; expected one of 'fake-gpt', "):
        cost("gpt-9", UsageBuckets())


def test_usage_buckets_add_up() -> None:
    total = UsageBuckets(1, 2, 3, 4, 5) + UsageBuckets(10, 20, 30, 40, 50)
    assert total == UsageBuckets(11, 22, 33, 44, 55)
