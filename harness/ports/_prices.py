"""A dated price table for the fake models, and the cost of a request's usage.

It lives in the neutral layer because both the fake providers (which bill a cache)
and the checkers (which price a trace's usage) read it.

Prices are USD per million tokens, per bucket. Usage buckets are disjoint
(DESIGN §7): uncached input, cache read, cache write (5 min / 1 h) and output
add up to everything billed, so ``cost`` is a plain sum and never double-counts
the cached tokens OpenAI reports inside ``prompt_tokens``.

The fake model names are modelled on public price lists, so reports show
realistic ratios (a cache read costs a tenth to a half of fresh input):

- OpenAI, "Pricing" (developers.openai.com/api/docs/pricing), as quoted on
  2026-11-29: gpt-4.1 $2.00 in / $0.50 cached / $8.00 out; gpt-4o-mini $0.15 /
  $0.075 / $0.60. OpenAI charges nothing extra to write its automatic cache,
  so both write prices equal the input price (and the fake reports no writes).
- Anthropic, "Pricing" and "Prompt caching" (platform.claude.com/docs), as
  quoted on 2026-11-29: 5-minute cache writes cost 1.25x input, 1-hour writes
  2x, reads 0.1x. Sonnet 4.5 $3 / $15, Haiku 4.5 $1 / $5, Opus 4.5 $5 / $25.

A real model name (``gpt-4o-mini``, ``claude-sonnet-4-5``, ``gemini-2.5-flash``, any
model of the four dialects' providers) is priced from ``genai-prices``, the table
pydantic keeps from the providers' price pages, read from the copy the installed
package ships (never fetched) as it stood on :data:`PRICES_AS_OF`, so a run's costs
are the same on every machine and day until the package is upgraded. A model it
does not know, and no name of the table above, has no price: the cost metrics say
``unknown`` and why. A different table is passed as ``prices`` (``load_results``).

Example::

    usage = UsageBuckets(uncached_input=1_000_000, output=1_000_000)
    assert cost("fake-sonnet", usage) == Decimal("18")
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from decimal import Decimal
from types import MappingProxyType
from typing import Any

from harness._errors import ConfigError, one_of

_PER_MILLION = Decimal(1_000_000)


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens, one price per usage bucket.

    >>> ModelPrice(Decimal("1"), Decimal("0.1"), Decimal("1.25"), Decimal("2"),
    ...            Decimal("5")).cache_read
    Decimal('0.1')
    """

    uncached_input: Decimal
    cache_read: Decimal
    cache_write_5m: Decimal
    cache_write_1h: Decimal
    output: Decimal


@dataclass(frozen=True)
class UsageBuckets:
    """Tokens of one request (or a sum of requests) in disjoint billing buckets.

    >>> UsageBuckets(uncached_input=10, cache_read=90).input_tokens
    100
    """

    uncached_input: int = 0
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    output: int = 0

    @property
    def input_tokens(self) -> int:
        """Every prompt token, however billed."""
        return self.uncached_input + self.cache_read + self.cache_write_5m + self.cache_write_1h

    def __add__(self, other: UsageBuckets) -> UsageBuckets:
        return UsageBuckets(*(getattr(self, f.name) + getattr(other, f.name)
                              for f in fields(self)))


def _anthropic(base_input: str, base_output: str) -> ModelPrice:
    # Cache multipliers from Anthropic's prompt caching price table (see module docstring).
    base = Decimal(base_input)
    return ModelPrice(base, base * Decimal("0.1"), base * Decimal("1.25"), base * 2,
                      Decimal(base_output))


def _openai(base_input: str, cached: str, base_output: str) -> ModelPrice:
    base = Decimal(base_input)
    return ModelPrice(base, Decimal(cached), base, base, Decimal(base_output))


PRICES: Mapping[str, ModelPrice] = MappingProxyType({
    "fake-gpt": _openai("2.00", "0.50", "8.00"),         # modelled on gpt-4.1
    "fake-gpt-mini": _openai("0.15", "0.075", "0.60"),   # modelled on gpt-4o-mini
    "fake-opus": _anthropic("5", "25"),                  # modelled on Claude Opus 4.5
    "fake-sonnet": _anthropic("3", "15"),                # modelled on Claude Sonnet 4.5
    "fake-haiku": _anthropic("1", "5"),                  # modelled on Claude Haiku 4.5
})
PRICES_AS_OF = "2026-11-29"

# The user's own prices (``--prices FILE``), asked before the table and genai-prices; set
# once per process before any case or report, so a run prices every case alike.
_OWN: dict[str, ModelPrice] = {}


def use_prices(table: Mapping[str, ModelPrice]) -> None:
    """Price ``table``'s models so in this process, before :data:`PRICES` and genai-prices
    (its names also price their dated snapshots); an empty table goes back to the defaults.

    >>> use_prices({"my-model": ModelPrice(*(Decimal(1),) * 5)})
    >>> price_of("my-model-2026").output, own_prices() != {}
    (Decimal('1'), True)
    >>> use_prices({})
    """
    _OWN.clear()
    _OWN.update(table)


def own_prices() -> Mapping[str, ModelPrice]:
    """The prices :func:`use_prices` set (empty: none)."""
    return MappingProxyType(_OWN)


def _in_table(model: str, prices: Mapping[str, ModelPrice]) -> ModelPrice | None:
    """An exact name of ``prices``, else the longest name ``model`` starts with."""
    if model in prices:
        return prices[model]
    families = [name for name in prices if model.startswith(name + "-")]
    return prices[max(families, key=len)] if families else None


def price_of(model: str, prices: Mapping[str, ModelPrice] = PRICES) -> ModelPrice:
    """The price of ``model``: an exact name, else the longest name it starts with, else
    (for the default table) the providers' own price of a real model. With the default
    table, the user's own prices (:func:`use_prices`) come first.

    Dated snapshots therefore price like their family (``fake-sonnet-2026``
    → ``fake-sonnet``).

    >>> price_of("fake-haiku-20261001").output
    Decimal('5')
    >>> price_of("gpt-4o-mini").cache_read
    Decimal('0.075')
    """
    found = _in_table(model, _OWN) if prices is PRICES else None
    found = found or _in_table(model, prices)
    if found is None and prices is PRICES:
        found = maintained_price(model)
    if found is None:
        raise ConfigError("model", model, one_of(tuple(sorted({**prices, **_OWN}))) + ", or "
                          "a model genai-prices knows",
                          "Use a model name the provider publishes a price for, or give "
                          "its price in a file passed as --prices FILE (see README, "
                          "'Pricing a model')")
    return found


def has_price(model: str) -> bool:
    """Whether :func:`price_of` prices ``model`` with the default table."""
    try:
        price_of(model)
    except ConfigError:
        return False
    return True


def _plain(price: Decimal) -> Decimal:
    """``0.075000`` as ``0.075`` and ``15.000`` as ``15`` (never ``1.5E+1``)."""
    return price.quantize(Decimal(1)) if price == price.to_integral() else price.normalize()


# The day genai-prices is read at: a price that changes later changes no run's cost.
_PRICED_AT = datetime(2026, 11, 29, tzinfo=UTC)
# Tokens priced per bucket: below every provider's long-context tier (Anthropic's
# prices double past 200,000 input tokens), then scaled to a million.
_SAMPLE_TOKENS = 1_000


@functools.cache
def maintained_price(model: str) -> ModelPrice | None:
    """``model``'s price per million tokens from genai-prices, or None when unknown.

    Anthropic's one-hour cache writes, which genai-prices does not list apart, cost
    twice the input price (its "Prompt caching" table); elsewhere they are the write
    price.
    """
    try:
        from genai_prices import Usage, calc_price
    except ImportError:  # an install without it: the table above alone
        return None

    def per_million(side: str, **tokens: int) -> Decimal:
        found = calc_price(Usage(**tokens), model, genai_request_timestamp=_PRICED_AT)
        value: Any = getattr(found, side)
        return _plain(Decimal(value) * (_PER_MILLION / _SAMPLE_TOKENS))

    n = _SAMPLE_TOKENS
    try:
        uncached = per_million("input_price", input_tokens=n)
        provider = calc_price(Usage(input_tokens=n), model,
                              genai_request_timestamp=_PRICED_AT).provider.id
        write = per_million("input_price", input_tokens=n, cache_write_tokens=n)
        return ModelPrice(
            uncached_input=uncached,
            cache_read=per_million("input_price", input_tokens=n, cache_read_tokens=n),
            cache_write_5m=write,
            cache_write_1h=uncached * 2 if provider == "anthropic" else write,
            output=per_million("output_price", output_tokens=n))
    except LookupError:
        return None


def cost(model: str, usage: UsageBuckets,
         prices: Mapping[str, ModelPrice] = PRICES) -> Decimal:
    """USD cost of ``usage`` on ``model``, exact (``Decimal``).

    >>> cost("fake-gpt", UsageBuckets(uncached_input=1000, cache_read=2000, output=500))
    Decimal('0.007')
    """
    price = price_of(model, prices)
    total = sum((Decimal(getattr(usage, f.name)) * getattr(price, f.name)
                 for f in fields(usage)), Decimal(0))
    return total / _PER_MILLION
