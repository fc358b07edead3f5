"""``--prices FILE``: a user's own prices, used by run's cost budget, compare and gate."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from fakes import has_price, price_of, use_prices
from harness._cli import main
from harness._errors import ScenarioError
from harness.frontend import load_price_file

PRIVATE = """\
name: private
dialect: openai
provider: {model: acme-private-7b}
model:
  - turn: 1
    text: Hello.
budget: {max_cost_usd: 1.0}
expect:
  stop_state: complete
"""

PRICES = """\
# USD per million tokens
acme-private-7b:
  input: 0.5
  output: 1.5
  cache_read: 0.05
"""


@pytest.fixture(autouse=True)
def default_prices() -> Iterator[None]:
    yield
    use_prices({})  # what a test priced stays in its test


def test_a_price_file_prices_a_private_model_and_its_snapshots(tmp_path: Path) -> None:
    (tmp_path / "prices.yaml").write_text(PRICES)
    assert not has_price("acme-private-7b")

    use_prices(load_price_file(tmp_path / "prices.yaml"))

    price = price_of("acme-private-7b-2026-01")
    assert (price.uncached_input, price.cache_read, price.cache_write_5m, price.output) == (
        Decimal("0.5"), Decimal("0.05"), Decimal("0.5"), Decimal("1.5"))


def test_a_json_price_file_overrides_a_known_model(tmp_path: Path) -> None:
    (tmp_path / "prices.json").write_text(json.dumps({"fake-gpt": {"input": 9, "output": 9}}))

    use_prices(load_price_file(tmp_path / "prices.json"))

    assert price_of("fake-gpt").output == Decimal(9)


def test_every_mistake_of_a_price_file_is_reported_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text("a: {input: 1, outptu: 2}\nb: {input: -1, output: 2}\nc: 3\n")

    with pytest.raises(ScenarioError) as caught:
        load_price_file(path)

    assert str(caught.value).splitlines() == [
        f"{path}:1:15: a: unknown key 'outptu'; expected one of input, output, cache_read, "
        "cache_write, cache_write_1h. Did you mean 'output'?",
        f"{path}:1:1: a: no output price; expected 'output:' with USD per million tokens",
        f"{path}:2:12: b.input: got -1; expected a number of USD per million tokens, 0 or "
        "more, such as 0.15",
        f"{path}:3:4: c: got 3; expected its prices per million tokens, such as "
        "'gpt-4o-mini: {input: 0.15, output: 0.60}'"]


def test_run_takes_prices_for_a_cost_budget_on_a_private_model(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "private.yaml"
    scenario.write_text(PRIVATE)
    (tmp_path / "prices.yaml").write_text(PRICES)

    assert main(["run", str(scenario), "--out", str(tmp_path / "no-prices")]) == 2
    assert "a cost budget needs a priced model" in capsys.readouterr().err
    assert main(["run", str(scenario), "--out", str(tmp_path / "out"),
                 "--prices", str(tmp_path / "prices.yaml")]) == 0


def test_a_bad_price_file_is_bad_input_for_run_and_gate(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.yaml").write_text("acme: {input: 1}\n")
    (tmp_path / "s.yaml").write_text(PRIVATE)

    assert main(["run", str(tmp_path / "s.yaml"), "--prices", str(tmp_path / "bad.yaml"),
                 "--out", str(tmp_path / "out")]) == 2
    assert main(["gate", str(tmp_path), str(tmp_path),
                 "--prices", str(tmp_path / "bad.yaml")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"harness: error: {tmp_path / 'bad.yaml'}:1:1: acme: no output price; expected "
        "'output:' with USD per million tokens"] * 2


def test_compare_costs_a_private_model_with_the_price_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "private.yaml"
    scenario.write_text(PRIVATE.replace("budget: {max_cost_usd: 1.0}\n", ""))
    (tmp_path / "prices.yaml").write_text(PRICES)
    for release in ("base", "cand"):
        assert main(["run", str(scenario), "--out", str(tmp_path / release)]) == 0

    def cost_rows(*extra: str) -> list[dict[str, object]]:
        out = tmp_path / f"report{len(extra)}"
        assert main(["compare", str(tmp_path / "base"), str(tmp_path / "cand"),
                     "--out", str(out), "--format", "json", *extra]) == 0
        data = json.loads((out / "report.json").read_text())
        return {row["name"]: row for row in data["metrics"]}["cost_per_successful_task"], \
            data["own_prices"]

    (unpriced, none), (priced, own) = (
        cost_rows(), cost_rows("--prices", str(tmp_path / "prices.yaml")))
    assert (unpriced["baseline"], unpriced["unpriced_models"], none) == (
        None, ["acme-private-7b"], [])
    assert priced["baseline"] is not None
    assert priced["baseline"] > 0
    assert own == ["acme-private-7b"]
