"""Line charts drawn on the server, as SVG geometry for the monitor's template. Pure.

The monitor draws each engine's cycle timeline, score and p95 latency without any network access and without a
charting library: :func:`line_chart` turns series of ``(unix seconds, value or None)`` points into a
:class:`Chart` — path data, ticks, shaded bands — that ``templates/charts.html`` writes as inline ``<svg>``.
Everything here is numbers: the path data holds only numbers and path commands, and every label goes through the
template's autoescaping. The colours are CSS classes (``monitor.css``), never inline styles, which the page's
Content-Security-Policy refuses.

A value of None breaks the line (a gap where nothing was measured: a node down, a paused engine), so a missing
hour is never drawn as a slope between its neighbours.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

WIDTH, HEIGHT = 300, 150
"""The drawing's own units (the SVG scales to its box). ``monitor.css`` writes the labels 12 units high and never lays
a chart out narrower than about 280 px, so that its text is at least 11 px on any screen, a phone's too."""

LEFT, RIGHT, TOP, BOTTOM = 46, 10, 10, 22
"""Room for the y labels on the left and the x labels at the bottom."""

Point = tuple[float, float | None]


@dataclass(frozen=True)
class Series:
    label: str
    css: str
    """The class that gives the line its colour (``monitor.css``)."""
    points: Sequence[Point]


@dataclass(frozen=True)
class Tick:
    at: float
    """Where, in the drawing's units."""
    label: str


@dataclass(frozen=True)
class Band:
    """A shaded stripe behind the lines, from ``top`` to ``top + height`` (drawing units)."""

    top: float
    height: float
    css: str


@dataclass(frozen=True)
class Line:
    label: str
    css: str
    path: str
    """SVG path data: ``M x y L x y …``, a new ``M`` after each gap."""
    last: str | None
    """The latest value, formatted (None: no value)."""


@dataclass(frozen=True)
class Chart:
    title: str
    lines: list[Line]
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    bands: list[Band] = field(default_factory=list)
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = WIDTH - RIGHT
    top: int = TOP
    bottom: int = HEIGHT - BOTTOM

    @property
    def empty(self) -> bool:
        return not any(line.path for line in self.lines)

    @property
    def summary(self) -> str:
        """What the chart says in words (its accessible description)."""
        latest = [f"{line.label} {line.last}" for line in self.lines if line.last is not None]
        return f"{self.title}: " + ("; ".join(latest) if latest else "no data")


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 × 10^k at or above ``value`` (1 for nothing above 0)."""
    if not value > 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * power * (1 + 1e-9):
            return step * power
    return 10 * power  # pragma: no cover - the loop's last step always holds


def plain_number(value: float) -> str:
    """``1200`` → ``1.2k``; ``12`` → ``12``; ``2.5`` → ``2.5``."""
    if abs(value) >= 10_000:
        return f"{value / 1000:.0f}k"
    if abs(value) >= 1000:
        return f"{value / 1000:.1f}".rstrip("0").rstrip(".") + "k"
    if value == int(value):
        return str(int(value))
    return f"{value:.1f}"


def milliseconds(value: float) -> str:
    """``850`` → ``850 ms``; ``1500`` → ``1.5 s``."""
    if value >= 1000:
        return f"{value / 1000:.1f}".rstrip("0").rstrip(".") + " s"
    return f"{value:.0f} ms"


def hour_ticks(start: float, end: float, every_hours: int = 6) -> list[tuple[float, str]]:
    """Whole UTC hours between ``start`` and ``end`` that are multiples of ``every_hours``, labelled ``HH:00``."""
    step = every_hours * 3600
    first = math.ceil(start / step) * step
    return [
        (moment, datetime.fromtimestamp(moment, UTC).strftime("%H:00"))
        for moment in range(int(first), int(end) + 1, step)
    ]


def month_ticks(start: float, end: float, every_months: int = 3) -> list[tuple[float, str]]:
    """The first day of every ``every_months``-th month (January, April, July, October by default) between ``start``
    and ``end``, labelled ``Apr`` (``Jan 27`` for January)."""
    moment = datetime.fromtimestamp(start, UTC)
    year, month = moment.year, moment.month
    ticks = []
    while True:
        month += 1
        if month > 12:
            year, month = year + 1, 1
        first = datetime(year, month, 1, tzinfo=UTC)
        if first.timestamp() > end:
            return ticks
        if (month - 1) % every_months == 0:
            ticks.append((first.timestamp(), first.strftime("%b") if month != 1 else first.strftime("%b %y")))


def line_chart(
    title: str,
    series: Sequence[Series],
    start: float,
    end: float,
    *,
    x_ticks: Sequence[tuple[float, str]] = (),
    y_max: float | None = None,
    y_format: Callable[[float], str] = plain_number,
    bands: Sequence[tuple[float, float, str]] = (),
) -> Chart:
    """A chart of ``series`` over ``[start, end]`` (unix seconds). The y axis runs from 0 to ``y_max`` (by default
    a round number at or above the highest value); ``bands`` are ``(low, high, css)`` stripes in values."""
    if end <= start:
        raise ValueError(f"a chart needs end > start, got {start!r} .. {end!r}")
    values = [value for each in series for _, value in each.points if value is not None]
    top_value = y_max if y_max is not None else nice_ceiling(max(values, default=0.0))
    left, right, top, bottom = LEFT, WIDTH - RIGHT, TOP, HEIGHT - BOTTOM

    def x_of(moment: float) -> float:
        return left + (right - left) * (moment - start) / (end - start)

    def y_of(value: float) -> float:
        return bottom - (bottom - top) * min(max(value, 0.0), top_value) / top_value

    lines = []
    for each in series:
        runs: list[list[tuple[float, float]]] = [[]]
        last = None
        for moment, value in sorted(each.points, key=lambda point: point[0]):
            if value is None or not start <= moment <= end:
                if runs[-1]:
                    runs.append([])
                continue
            runs[-1].append((x_of(moment), y_of(value)))
            last = value
        commands = []
        for run in runs:
            if len(run) == 1:  # a point alone between gaps: a short stroke, so that it shows
                run.append((run[0][0] + 2, run[0][1]))
            commands += [f"{'L' if index else 'M'}{x:.1f} {y:.1f}" for index, (x, y) in enumerate(run)]
        lines.append(Line(each.label, each.css, " ".join(commands), None if last is None else y_format(last)))
    y_ticks = (
        []
        if not values and y_max is None
        else [Tick(round(y_of(value), 1), y_format(value)) for value in (0.0, top_value / 2, top_value)]
    )
    shaded = [Band(round(y_of(high), 1), round(y_of(low) - y_of(high), 1), css) for low, high, css in bands]
    return Chart(
        title,
        lines,
        [Tick(round(x_of(moment), 1), label) for moment, label in x_ticks if start <= moment <= end],
        y_ticks,
        shaded,
    )
