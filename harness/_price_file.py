"""A user's price file (``--prices FILE``, ini ``harness_prices``): the price of a model the
default table and genai-prices do not know (a private or fine-tuned model), or another
price for one they do.

YAML or JSON, one entry per model, USD per million tokens::

    gpt-4o-mini:            # a name prices its dated snapshots too (gpt-4o-mini-2024-07-18)
      input: 0.15
      output: 0.60
      cache_read: 0.075     # optional; default: the input price
      cache_write: 0.15     # optional; default: the input price (5-minute cache writes)
      cache_write_1h: 0.30  # optional; default: the cache_write price

Every mistake of the file is reported at once, each at its ``file:line:col``.
"""

from __future__ import annotations

import argparse
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING

from harness._errors import ScenarioError

if TYPE_CHECKING:
    from fakes import ModelPrice
    from harness.scenario import SourceMap

#: The keys of one model's entry, and whether each must be given.
PRICE_KEYS = {"input": True, "output": True, "cache_read": False, "cache_write": False,
              "cache_write_1h": False}
_EXAMPLE = "such as 'gpt-4o-mini: {input: 0.15, output: 0.60}'"


def load_price_file(path: Path | str) -> dict[str, ModelPrice]:
    """The prices ``path`` gives, by model name; a :class:`ScenarioError` listing every
    mistake, each at its line.

    >>> import tempfile
    >>> file = Path(tempfile.mkdtemp()) / "prices.yaml"
    >>> _ = file.write_text("my-model: {input: 1, output: 4.5}\\n")
    >>> load_price_file(file)["my-model"].output
    Decimal('4.5')
    """
    from harness.scenario import read_yaml

    data, source = read_yaml(Path(path))
    where = str(path)
    if not isinstance(data, dict) or not data:
        raise ScenarioError(where, *source.position(()), "a price file", got=_shown(data),
                            expected=f"a mapping of model names to their prices, {_EXAMPLE}")
    table: dict[str, ModelPrice] = {}
    errors: list[ScenarioError] = []
    for model, entry in data.items():
        price, found = _entry(where, source, str(model), entry)
        errors += found
        if price is not None:
            table[str(model)] = price
    if errors:
        raise ScenarioError.combine(errors)
    return table


def _entry(where: str, source: SourceMap, model: str, entry: object
           ) -> tuple[ModelPrice | None, list[ScenarioError]]:
    """One model's price, or the errors of its entry."""
    from fakes import ModelPrice
    from harness.scenario import did_you_mean

    if not isinstance(entry, dict):
        return None, [ScenarioError(where, *source.position((model,)), model, got=_shown(entry),
                                    expected=f"its prices per million tokens, {_EXAMPLE}")]
    errors = [ScenarioError(where, *source.position((model, key), at_key=True),
                            f"{model}: unknown key {key!r}",
                            expected=f"one of {', '.join(PRICE_KEYS)}",
                            hint=did_you_mean(str(key), list(PRICE_KEYS)))
              for key in entry if key not in PRICE_KEYS]
    errors += [ScenarioError(where, *source.position((model,), at_key=True),
                             f"{model}: no {key} price",
                             expected=f"'{key}:' with USD per million tokens")
               for key, needed in PRICE_KEYS.items() if needed and key not in entry]
    values: dict[str, Decimal] = {}
    for key in PRICE_KEYS:
        if key in entry:
            value = _usd(entry[key])
            if value is None:
                errors.append(ScenarioError(
                    where, *source.position((model, key)), f"{model}.{key}",
                    got=_shown(entry[key]), expected="a number of USD per million tokens, 0 "
                    "or more, such as 0.15"))
            else:
                values[key] = value
    if errors:
        return None, errors
    write = values.get("cache_write", values["input"])
    return ModelPrice(uncached_input=values["input"],
                      cache_read=values.get("cache_read", values["input"]),
                      cache_write_5m=write, cache_write_1h=values.get("cache_write_1h", write),
                      output=values["output"]), []


def _usd(value: object) -> Decimal | None:
    """A price as written (``0.15``, ``"0.15"``, ``2``), exact; None when it is none."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        price = Decimal(str(value))
    except InvalidOperation:
        return None
    return price if price.is_finite() and price >= 0 else None


def _shown(value: object) -> str:
    return repr(value) if not isinstance(value, dict | list) else type(value).__name__


def add_prices_option(command: argparse.ArgumentParser) -> None:
    """``--prices FILE`` on ``run``, ``compare`` and ``gate``."""
    command.add_argument("--prices", type=Path, metavar="FILE", default=None,
                         help="your own prices, USD per million tokens by model (YAML or "
                              "JSON: 'my-model: {input: 1, output: 4}'), before the shipped "
                              "table and genai-prices (see README, 'Pricing a model')")


def use_price_file(path: Path | None) -> None:
    """Price models from ``path`` in this process from now on (no file: the defaults)."""
    if path is None:
        return
    from fakes import use_prices

    use_prices(load_price_file(path))
