"""Inline SVG charts for the HTML report: no script, no web font, works offline.

Each function returns one ``<svg>`` element as text, sized in CSS pixels, with
a ``<title>`` for screen readers. Numbers are rounded so the same data gives
the same bytes.

Example::

    svg = grouped_bars("Stop states", ["complete", "failed"],
                       [("baseline", BASE, [9, 1]), ("candidate", CAND, [7, 3])])
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

BASE = "#7a8797"
CAND = "#2f6fb0"
WORSE = "#c0392b"
BETTER = "#2e8b57"
_FONT = "font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif"
_LABEL_W = 300
_BAR_W = 380
_ROW_H = 16


def _svg(width: int, height: int, title: str, body: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}" style="{_FONT};font-size:12px">'
            f"<title>{escape(title)}</title>" + "".join(body) + "</svg>")


def _text(x: float, y: float, text: str, anchor: str = "start", fill: str = "#222") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" fill="{fill}">'
            f"{escape(text)}</text>")


def _number(value: float) -> str:
    return f"{value:.3g}"


def grouped_bars(title: str, categories: Sequence[str],
                 series: Sequence[tuple[str, str, Sequence[float | None]]],
                 unit: str = "") -> str:
    """Horizontal bars, one group per category, one bar per series; None draws no bar.

    >>> grouped_bars("t", ["a"], [("x", BASE, [1.0])]).startswith("<svg")
    True
    """
    values = [v for _, _, vs in series for v in vs if v is not None]
    top = max(values, default=0.0) or 1.0
    group_h = _ROW_H * len(series) + 10
    height = 30 + group_h * len(categories) + 10
    body = [_legend(series)]
    for row, category in enumerate(categories):
        y0 = 30 + row * group_h
        body.append(_text(_LABEL_W - 8, y0 + group_h / 2, category, "end"))
        for i, (_name, color, vals) in enumerate(series):
            value = vals[row]
            if value is None:
                continue
            width = max(value / top * _BAR_W, 1.0 if value else 0.0)
            y = y0 + i * _ROW_H
            body.append(f'<rect x="{_LABEL_W}" y="{y:.1f}" width="{width:.1f}" '
                        f'height="{_ROW_H - 3}" fill="{color}"/>')
            body.append(_text(_LABEL_W + width + 4, y + _ROW_H - 5, _number(value) + unit))
    return _svg(_LABEL_W + _BAR_W + 70, int(height), title, body)


def _legend(series: Sequence[tuple[str, str, Sequence[float | None]]]) -> str:
    parts = []
    for i, (name, color, _) in enumerate(series):
        x = _LABEL_W + i * 130
        parts.append(f'<rect x="{x}" y="6" width="12" height="12" fill="{color}"/>')
        parts.append(_text(x + 16, 16, name))
    return "".join(parts)


def delta_chart(rows: Sequence[tuple[str, float | None, tuple[float, float] | None, str]]
                ) -> str:
    """Each metric's change as "how much worse" (right, red) or better (left, green).

    ``rows`` are (label, point change, interval of the change, the change as the
    table prints it). Positions are in "worse by" units, so every metric reads the
    same way; the printed change has the table's sign and unit (``+153 %``).

    >>> "<line" in delta_chart([("cost", 0.1, (0.05, 0.2), "+10 %")])
    True
    """
    ends = [abs(v) for _, p, ci, _ in rows for v in ((p,) if p is not None else ()) + (ci or ())]
    scale = (_BAR_W / 2) / (max(ends, default=0.0) or 0.01)
    mid = _LABEL_W + _BAR_W / 2
    height = 40 + _ROW_H * 1.6 * len(rows)
    body = [f'<line x1="{mid}" y1="22" x2="{mid}" y2="{height - 8:.1f}" stroke="#999"/>',
            _text(mid - 6, 16, "better", "end", BETTER), _text(mid + 6, 16, "worse", "start",
                                                                   WORSE)]
    for row, (label, point, interval, change) in enumerate(rows):
        y = 34 + row * _ROW_H * 1.6
        body.append(_text(_LABEL_W - 8, y + 4, label, "end"))
        if interval is not None:
            low, high = sorted(interval)
            color = WORSE if low > 0 else BETTER if high < 0 else "#555"
            body.append(f'<line x1="{mid + low * scale:.1f}" y1="{y:.1f}" '
                        f'x2="{mid + high * scale:.1f}" y2="{y:.1f}" stroke="{color}" '
                        'stroke-width="3"/>')
        if point is not None:
            color = WORSE if point > 0 else BETTER if point < 0 else "#555"
            body.append(f'<circle cx="{mid + point * scale:.1f}" cy="{y:.1f}" r="4.5" '
                        f'fill="{color}"/>')
            body.append(_text(_LABEL_W + _BAR_W + 8, y + 4, change))
    return _svg(_LABEL_W + _BAR_W + 70, int(height), "Change per metric", body)
