"""Charts as inline SVG strings, drawn here so the report page needs no script, CDN or
network: stacked bars with a line over them, horizontal bars and grouped bars. Pure; every
label is escaped, since names come from the database."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

Fmt = Callable[[float], str]

# Okabe–Ito, readable by most colour-blind readers; the first colours go to the biggest series.
PALETTE = (
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
    "#7F7F7F", "#8C564B",
)
LINE_COLOUR = "#222222"
GRID = "#e3e6ea"
WIDTH = 1000  # of a full-width chart: drawn about 1:1, so text keeps its size
HALF_WIDTH = 500  # of a chart in one of two columns
LEFT, RIGHT, TOP, BOTTOM = 70, 16, 14, 30  # plot margins, in px of the viewBox


@dataclass(frozen=True, slots=True)
class Series:
    name: str
    values: Sequence[float | None]
    colour: str


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def nice_ticks(top: float, count: int = 5) -> list[float]:
    """0 and round steps (1, 2, 2.5 or 5 × 10^k) up to at least `top`."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    n = math.ceil(top / step - 1e-9)
    return [round(i * step, 12) for i in range(n + 1)]


def log_ticks(low: float, high: float) -> list[float]:
    """1-2-5 steps per decade covering [low, high] (both > 0)."""
    first = math.floor(math.log10(low))
    last = math.ceil(math.log10(high))
    ticks = [m * 10.0**e for e in range(first, last + 1) for m in (1, 2, 5)]
    below = [t for t in ticks if t <= low]
    above = [t for t in ticks if t >= high]
    lo, hi = (below[-1] if below else ticks[0]), (above[0] if above else ticks[-1])
    return [t for t in ticks if lo <= t <= hi]


def _svg(width: int, height: float, label: str, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {width} '
        f'{height:.0f}" role="img" aria-label="{escape(label)}">'
        f"<title>{escape(label)}</title>{''.join(body)}</svg>"
    )


def _text(x: float, y: float, text: str, anchor: str = "end", cls: str = "tick") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" class="{cls}">'
            f"{escape(text)}</text>")


def _rect(x: float, y: float, w: float, h: float, fill: str, tip: str) -> str:
    return (f'<rect x="{x:.2f}" y="{y:.2f}" width="{max(w, 0):.2f}" height="{max(h, 0):.2f}" '
            f'fill="{fill}"><title>{escape(tip)}</title></rect>')


def _y_grid(
    width: int, ticks: list[float], y_of: Callable[[float], float], fmt: Fmt
) -> list[str]:
    out = []
    for t in ticks:
        y = y_of(t)
        out.append(f'<line x1="{LEFT}" x2="{width - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" '
                   f'stroke="{GRID}"/>')
        out.append(_text(LEFT - 6, y + 4, fmt(t)))
    return out


def stacked_bars(
    labels: Sequence[str], stacks: Sequence[Series], line: Series | None, fmt: Fmt,
    title: str, height: int = 300, width: int = WIDTH,
) -> str:
    """One stacked bar per label (x), and optionally a line drawn across the bars' centres."""
    bottom = height - BOTTOM
    totals = [sum(s.values[i] or 0 for s in stacks) for i in range(len(labels))]
    peak = max([*totals, *((v or 0) for v in (line.values if line else ()))], default=0)
    ticks = nice_ticks(peak)
    scale = (bottom - TOP) / ticks[-1]

    def y_of(v: float) -> float:
        return bottom - v * scale

    slot = (width - LEFT - RIGHT) / max(len(labels), 1)
    bar = max(slot * 0.72, 0.5)
    body = _y_grid(width, ticks, y_of, fmt)
    every = max(1, math.ceil(len(labels) / 10))  # at most ~10 x labels, however many days
    for i, label in enumerate(labels):
        x = LEFT + i * slot + (slot - bar) / 2
        base = 0.0
        for s in stacks:
            v = s.values[i] or 0
            if v > 0:
                body.append(_rect(x, y_of(base + v), bar, v * scale, s.colour,
                                  f"{label} · {s.name}: {fmt(v)}"))
                base += v
        if i % every == 0:
            body.append(_text(LEFT + (i + 0.5) * slot, bottom + 18, label, "middle"))
    if line is not None:
        points = [
            (LEFT + (i + 0.5) * slot, y_of(v))
            for i, v in enumerate(line.values) if v is not None
        ]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        body.append(f'<polyline class="line" points="{path}" fill="none" stroke="{line.colour}" '
                    'stroke-width="2" stroke-dasharray="6 4"/>')
        for (x, y), v, label in zip(points, line.values, labels, strict=False):
            body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{line.colour}">'
                        f"<title>{escape(f'{label} · {line.name}: {fmt(v or 0)}')}</title>"
                        "</circle>")
    body.append(f'<line x1="{LEFT}" x2="{width - RIGHT}" y1="{bottom}" y2="{bottom}" '
                'stroke="#888"/>')
    return _svg(width, height, title, body)


def horizontal_bars(
    labels: Sequence[str], series: Sequence[Series], fmt: Fmt, title: str,
    label_width: int = 180, row_colours: Sequence[str] | None = None, width: int = WIDTH,
) -> str:
    """One row per label, one bar per series in each row, each with its value at its end.
    `row_colours` paints a one-series chart row by row (a backend keeps its colour)."""
    bar_h, gap = 16.0, 10.0
    row_h = bar_h * len(series) + gap
    height = TOP + row_h * len(labels) + 8
    peak = max((v or 0 for s in series for v in s.values), default=0) or 1.0
    span = width - label_width - RIGHT - 90  # room for the value text after the longest bar
    body = []
    for i, label in enumerate(labels):
        top = TOP + i * row_h
        body.append(_text(label_width - 8, top + row_h / 2 - gap / 2 + 4, _clip(label), "end",
                          "label"))
        for j, s in enumerate(series):
            v = s.values[i] or 0
            y = top + j * bar_h
            w = v / peak * span
            fill = row_colours[i] if row_colours else s.colour
            body.append(_rect(label_width, y + 1, w, bar_h - 2, fill,
                              f"{label} · {s.name}: {fmt(v)}"))
            body.append(_text(label_width + w + 6, y + bar_h - 4, fmt(v), "start", "value"))
    return _svg(width, height, title, body)


def grouped_bars(
    labels: Sequence[str], series: Sequence[Series], fmt: Fmt, title: str,
    height: int = 260, log_scale: bool = True, width: int = HALF_WIDTH,
) -> str:
    """Bars side by side per label; a log scale keeps p50 readable next to a long p99."""
    bottom = height - BOTTOM
    values = [v for s in series for v in s.values if v is not None and v > 0]
    if not values:
        values = [1.0]
    if log_scale:
        # Below the smallest value, so the shortest bar still shows.
        ticks = log_ticks(min(values) / 1.5, max(values))
        lo, hi = math.log10(ticks[0]), math.log10(ticks[-1])
        hi = hi if hi > lo else lo + 1

        def y_of(v: float) -> float:
            return bottom - (math.log10(v) - lo) / (hi - lo) * (bottom - TOP)
    else:
        ticks = nice_ticks(max(values))

        def y_of(v: float) -> float:
            return bottom - v / ticks[-1] * (bottom - TOP)

    slot = (width - LEFT - RIGHT) / max(len(labels), 1)
    bar = min(slot * 0.8 / max(len(series), 1), 36.0)
    body = _y_grid(width, ticks, y_of, fmt)
    for i, label in enumerate(labels):
        start = LEFT + i * slot + (slot - bar * len(series)) / 2
        for j, s in enumerate(series):
            v = s.values[i]
            if v is None or v <= 0:
                continue
            y = y_of(v)
            body.append(_rect(start + j * bar, y, bar - 2, bottom - y, s.colour,
                              f"{label} · {s.name}: {fmt(v)}"))
        body.append(_text(LEFT + (i + 0.5) * slot, bottom + 18, _clip(label), "middle"))
    body.append(f'<line x1="{LEFT}" x2="{width - RIGHT}" y1="{bottom}" y2="{bottom}" '
                'stroke="#888"/>')
    return _svg(width, height, title, body)


def _clip(label: str, limit: int = 26) -> str:
    """Long names are cut on the chart (the tooltip keeps them whole)."""
    return label if len(label) <= limit else label[: limit - 1] + "…"
