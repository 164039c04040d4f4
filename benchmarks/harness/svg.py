"""Line charts as hand-written SVG: axes, ticks, polylines and a legend, no plotting library.

The growth curves (benchmarks/growth.py) draw one chart per curve for docs/benchmarks.md. A
few dozen lines of SVG are enough for that, and they keep the benchmark free of dependencies.
The x axis is logarithmic when the values span more than a decade (and none is zero).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 560, 340
LEFT, RIGHT, TOP, BOTTOM = 78, 20, 34, 58
COLOURS = ("#4c78a8", "#9d9d9d", "#e45756", "#54a24b", "#b279a2")
DASHES = ("", "6 4", "")


def _nice(top: float) -> tuple[float, list[float]]:
    """An axis maximum at or above `top` and 4-6 round ticks from zero to it."""
    if top <= 0:
        return 1.0, [0.0, 1.0]
    step = 10 ** math.floor(math.log10(top / 5))
    for factor in (1, 2, 2.5, 5, 10):
        if top / (step * factor) <= 6:
            step *= factor
            break
    ticks = [step * i for i in range(math.ceil(top / step) + 1)]
    return ticks[-1], ticks


def label(value: float) -> str:
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            text = f"{value / limit:.1f}".rstrip("0").rstrip(".")
            return text + suffix
    return f"{value:g}"


def chart(
    title: str,
    x_label: str,
    y_label: str,
    xs: Sequence[float],
    series: dict[str, Sequence[float]],
    x_ticks: Sequence[str] | None = None,
) -> str:
    """One SVG document: a line per series over the same xs (ticked with `x_ticks` if given)."""
    log = min(xs) > 0 and max(xs) / min(xs) >= 10
    fx = (lambda v: math.log10(v)) if log else (lambda v: float(v))
    x0, x1 = fx(min(xs)), fx(max(xs))
    span = (x1 - x0) or 1.0
    top, yticks = _nice(max((v for values in series.values() for v in values), default=1.0))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(v: float) -> float:
        return LEFT + (fx(v) - x0) / span * plot_w

    def py(v: float) -> float:
        return TOP + plot_h - v / top * plot_h

    out = _frame(title, yticks, py)
    for n, x in enumerate(xs):
        xp = px(x)
        tick = x_ticks[n] if x_ticks else label(x)
        out.append(f'<line x1="{xp:.1f}" y1="{TOP + plot_h}" x2="{xp:.1f}" y2="{TOP + plot_h + 5}" stroke="#333"/>')
        out.append(f'<text x="{xp:.1f}" y="{TOP + plot_h + 18}" text-anchor="middle">{escape(tick)}</text>')
    out.append(
        f'<polyline points="{LEFT},{TOP} {LEFT},{TOP + plot_h} {WIDTH - RIGHT},{TOP + plot_h}" '
        'fill="none" stroke="#333"/>'
    )
    scale = " (log scale)" if log else ""
    out.append(f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 22}" text-anchor="middle">{escape(x_label + scale)}</text>')
    out.append(
        f'<text transform="translate(16 {TOP + plot_h / 2}) rotate(-90)" text-anchor="middle">{escape(y_label)}</text>'
    )
    for n, (name, values) in enumerate(series.items()):
        colour, dash = COLOURS[n % len(COLOURS)], DASHES[n % len(DASHES)]
        points = " ".join(f"{px(x):.1f},{py(v):.1f}" for x, v in zip(xs, values, strict=True))
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"{dashed}/>')
        for x, v in zip(xs, values, strict=True):
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(v):.1f}" r="2.5" fill="{colour}"/>')
        ly = HEIGHT - 8
        lx = LEFT + n * 110
        out.append(
            f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 22}" y2="{ly - 4}" stroke="{colour}" stroke-width="2"{dashed}/>'
        )
        out.append(f'<text x="{lx + 27}" y="{ly}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def bars(title: str, y_label: str, groups: Sequence[str], series: dict[str, Sequence[float]]) -> str:
    """One SVG document: grouped bars, a group per entry of `groups` and a bar per series in each.

    The saturation benchmark (benchmarks/saturation.py) draws its throughput per mode this way:
    its x axis is categories, which a line between them would misread as a trend.
    """
    top, yticks = _nice(max((v for values in series.values() for v in values), default=1.0))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    group_w = plot_w / max(len(groups), 1)
    bar_w = group_w * 0.8 / max(len(series), 1)

    def py(v: float) -> float:
        return TOP + plot_h - v / top * plot_h

    out = _frame(title, yticks, py)
    for g, group in enumerate(groups):
        x0 = LEFT + g * group_w + group_w * 0.1
        for n, values in enumerate(series.values()):
            y = py(values[g])
            out.append(
                f'<rect x="{x0 + n * bar_w:.1f}" y="{y:.1f}" width="{bar_w * 0.9:.1f}" '
                f'height="{TOP + plot_h - y:.1f}" fill="{COLOURS[n % len(COLOURS)]}"/>'
            )
        out.append(
            f'<text x="{LEFT + (g + 0.5) * group_w:.1f}" y="{TOP + plot_h + 18}" text-anchor="middle">{escape(group)}</text>'
        )
    out.append(
        f'<polyline points="{LEFT},{TOP} {LEFT},{TOP + plot_h} {WIDTH - RIGHT},{TOP + plot_h}" '
        'fill="none" stroke="#333"/>'
    )
    out.append(
        f'<text transform="translate(16 {TOP + plot_h / 2}) rotate(-90)" text-anchor="middle">{escape(y_label)}</text>'
    )
    lx, ly = float(LEFT), HEIGHT - 14
    for n, name in enumerate(series):
        width = 22 + 7 * len(name)  # a box and the name at about 7 px a character
        if lx + width > WIDTH - RIGHT:
            lx, ly = float(LEFT), ly + 14
        out.append(f'<rect x="{lx:.1f}" y="{ly - 9}" width="10" height="10" fill="{COLOURS[n % len(COLOURS)]}"/>')
        out.append(f'<text x="{lx + 14:.1f}" y="{ly}">{escape(name)}</text>')
        lx += width
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _frame(title: str, yticks: Sequence[float], py: Callable[[float], float]) -> list[str]:
    """The opening of a plot: the document, its white ground, the title and the y grid with its labels."""
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="11">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="18" text-anchor="middle" font-size="13">{escape(title)}</text>',
    ]
    for tick in yticks:
        y = py(tick)
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="#e6e6e6"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{label(tick)}</text>')
    return out
