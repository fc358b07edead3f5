"""The HTML reports the product ships, opened in a real headless browser.

The release-comparison demonstration writes two HTML reports (``harness compare --out``
and ``harness gate --out``). Each is opened in Debian's Chromium (driven by Playwright,
never a downloaded browser), screenshotted, and every chart must have drawn: each data
value has a visible mark of the right size and side inside its chart, each series'
colour is on the chart's pixels, and each change the chart prints is the table's.

Without Chromium (or Playwright) the test skips and says why, unless
``HARNESS_REQUIRE_BROWSER=1`` (set by ``.ci/run``): then a missing browser fails.
"""

from __future__ import annotations

import io
import json
import math
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reports import _charts as charts

# System tier (pytest --system): a real headless browser.
pytestmark = [pytest.mark.browser, pytest.mark.system]

# HARNESS_CHROMIUM names another Chromium build (the system's by default).
CHROMIUM = os.environ.get("HARNESS_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# Flags that work on a closed network and as root (no sandbox); a fresh profile per launch.
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
REPORTS = ("report", "gate-report")
DELTA = "Change per metric"
TTFT = "Time to first token p95 by model and context length"
STOPS = "Runs per stop state"
MISSES = "Cache misses by reason and changed dimension"

# Every mark the page drew, per chart, with its box in page pixels (after layout).
MARKS_JS = """() => [...document.querySelectorAll('figure svg')].map(svg => {
  const box = r => ({x: r.x, y: r.y, w: r.width, h: r.height});
  const marks = [...svg.querySelectorAll('rect, circle, line')].map(e => ({
    kind: e.tagName, fill: e.getAttribute('fill'), stroke: e.getAttribute('stroke'),
    ...box(e.getBoundingClientRect())}));
  const texts = [...svg.querySelectorAll('text')].map(e => ({
    text: e.textContent, ...box(e.getBoundingClientRect())}));
  return {title: svg.querySelector('title').textContent,
          frame: box(svg.getBoundingClientRect()), marks, texts};
})"""
CHANGES_JS = """() => [...document.querySelectorAll('table')][0].querySelectorAll('tbody tr')
  .values().map(tr => [tr.cells[0].textContent, tr.cells[4].textContent]).toArray()"""


def _require_browser() -> str:
    """Why the browser cannot run, or fail when CI requires it."""
    reason = ""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        reason = "playwright is not installed (pip install -e '.[test]')"
    if not reason and not Path(CHROMIUM).exists():
        reason = (f"Chromium is not installed at {CHROMIUM}: apt-get install -y "
                  "--no-install-recommends chromium (.ci/run does this)")
    if reason and os.environ.get("HARNESS_REQUIRE_BROWSER") == "1":
        pytest.fail(f"HARNESS_REQUIRE_BROWSER=1 but {reason}")
    return reason


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    reason = _require_browser()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": 1100, "height": 900}, offline=True)
        try:
            yield context.new_page()
        finally:
            context.close()


def _render(page: Any, html: Path, shot: Path) -> tuple[list[dict[str, Any]], list[Any]]:
    page.goto(html.as_uri())
    page.wait_for_load_state("load")
    page.screenshot(path=str(shot), full_page=True)
    return page.evaluate(MARKS_JS), page.evaluate(CHANGES_JS)


def _share_of(image: Any, box: dict[str, float], color: str) -> float:
    """The share of the screenshot's pixels inside ``box`` that are exactly ``color``."""
    left, top = math.ceil(box["x"]), math.ceil(box["y"])
    right, bottom = math.floor(box["x"] + box["w"]), math.floor(box["y"] + box["h"])
    if right <= left or bottom <= top:
        return 0.0  # nothing drawn
    region = image.crop((left, top, right, bottom))
    counts = {rgb: n for n, rgb in region.getcolors(1 << 20) or []}
    return counts.get(_rgb(color), 0) / max(sum(counts.values()), 1)


def _rgb(hex_color: str) -> tuple[int, int, int]:
    """``#c0392b`` or ``#555`` as an RGB triple."""
    digits = hex_color[1:]
    if len(digits) == 3:
        digits = "".join(d * 2 for d in digits)
    red, green, blue = (int(digits[i:i + 2], 16) for i in (0, 2, 4))
    return red, green, blue


def _inside(mark: dict[str, float], frame: dict[str, float]) -> bool:
    return (frame["x"] - 1 <= mark["x"] and mark["x"] + mark["w"] <= frame["x"] + frame["w"] + 1
            and frame["y"] - 1 <= mark["y"]
            and mark["y"] + mark["h"] <= frame["y"] + frame["h"] + 1)


def _bars(chart: dict[str, Any]) -> list[dict[str, Any]]:
    """The bars of a grouped bar chart, in drawing order (the legend's swatches are 12 px)."""
    return [m for m in chart["marks"] if m["kind"] == "rect" and m["h"] > 12]


def _check_grouped(chart: dict[str, Any], values: list[float | None], image: Any) -> None:
    """Each value drew a bar as long as its share of the longest, painted in its series' colour.
    """
    drawn = [v for v in values if v is not None]
    bars = _bars(chart)
    assert len(bars) == len(drawn), chart["title"]
    longest, widest = max(drawn), max(b["w"] for b in bars)
    for value, bar in zip(drawn, bars, strict=True):
        assert bar["w"] == pytest.approx(value / longest * widest, abs=1.5), chart["title"]
        if value > 0:
            assert _share_of(image, bar, bar["fill"]) > 0.9, (chart["title"], value)
        else:
            assert bar["w"] == 0, chart["title"]


def _check_delta(chart: dict[str, Any], metrics: list[dict[str, Any]],
                 table: dict[str, str], image: Any) -> None:
    """One dot per metric, right of the axis when worse; the printed change is the table's."""
    axis = next(m for m in chart["marks"] if m["kind"] == "line" and m["h"] > 20)
    dots = [m for m in chart["marks"] if m["kind"] == "circle"]
    assert len(dots) == len(metrics)
    for metric, dot in zip(metrics, dots, strict=True):
        centre, worse_by = dot["x"] + dot["w"] / 2, metric["worse_by"]
        side = (centre > axis["x"] + 1) - (centre < axis["x"] - 1)
        assert side == (worse_by > 1e-9) - (worse_by < -1e-9), metric["name"]
        assert dot["fill"] == (charts.WORSE if worse_by > 0 else
                               charts.BETTER if worse_by < 0 else "#555")
        assert _share_of(image, dot, dot["fill"]) > 0.5, metric["name"]
        row = [t["text"] for t in chart["texts"] if abs(t["y"] + t["h"] / 2 - dot["y"]
                                                         - dot["h"] / 2) < 6]
        assert row == [metric["label"], table[metric["label"]]], metric["name"]


@pytest.mark.parametrize("report", REPORTS)
def test_every_chart_of_the_shipped_report_draws_in_a_real_browser(
    page: Any, release_demo: Path, tmp_path: Path, report: str,
) -> None:
    from PIL import Image

    folder = release_demo / report
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    shot = tmp_path / f"{report}.png"
    found, changes = _render(page, folder / "report.html", shot)
    table = dict(changes)
    assert [m["change"] for m in data["metrics"]] == [table[m["label"]] for m in data["metrics"]]
    by_title = {chart["title"]: chart for chart in found}
    assert list(by_title) == [DELTA, TTFT, STOPS, MISSES]
    for chart in found:
        assert chart["frame"]["w"] > 300, chart["title"]
        assert chart["frame"]["h"] > 40, chart["title"]
        visible = [m for m in chart["marks"] if m["w"] > 0 or m["h"] > 0]
        assert all(_inside(m, chart["frame"]) for m in visible), chart["title"]
        assert all(_inside(t, chart["frame"]) for t in chart["texts"]), chart["title"]

    with Image.open(io.BytesIO(shot.read_bytes())) as png:
        assert png.format == "PNG"
        image = png.convert("RGB")
    _check_delta(by_title[DELTA], data["metrics"], table, image)
    _check_grouped(by_title[TTFT], _pairs(data["ttft"], "ttft_p95"), image)
    _check_grouped(by_title[STOPS], _pairs(data["stop_states"], "runs"), image)
    _check_grouped(by_title[MISSES], _pairs(data["miss_reasons"], "misses"), image)


def _pairs(rows: list[dict[str, Any]], key: str) -> list[float | None]:
    """Baseline then candidate value of each row: the order the bars are drawn in."""
    return [value for row in rows for value in (row[key], row[f"{key}_candidate"])]
