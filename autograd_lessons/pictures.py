"""The small matplotlib pictures inside the widgets, each one figure updated in place.

Each picture draws its figure once (fixed size and axis limits, so nothing jumps);
``update(state)`` only moves the few artists that change, and ``png()`` blits them
onto the cached background and encodes the result: a few milliseconds instead of
a full redraw. Figures use Agg directly, are not registered with pyplot, and are
reused, so they are never shown twice and never pile up in memory.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch
from PIL import Image

from ._format import format_short
from .states import NeuronState, TangentState

__all__ = ["HistoryPicture", "NeuronPicture", "Picture", "TangentPicture"]

BLUE, ORANGE, GREY, GREEN, RED = "#1f77b4", "#ff7f0e", "#9a9a9a", "#1a7f37", "#c62828"


class Picture:
    """A fixed-size Agg figure whose moving parts are blitted over a cached background."""

    def __init__(self, width: float, height: float) -> None:
        self.figure = Figure(figsize=(width, height), dpi=100)
        self.canvas: Any = FigureCanvasAgg(self.figure)  # Agg's methods are untyped
        self._moving: list[Artist] = []
        self._background: object | None = None

    def _moves(self, *artists: Artist) -> None:
        for artist in artists:
            artist.set_animated(True)  # left out of the background, drawn by png()
            self._moving.append(artist)

    def invalidate(self) -> None:
        """Redraw the background at the next ``png()`` (after changing titles or limits)."""
        self._background = None

    def png(self) -> bytes:
        """The current picture as PNG bytes (always the same pixel size)."""
        if self._background is None:
            self.canvas.draw()
            self._background = self.canvas.copy_from_bbox(self.figure.bbox)
        else:
            self.canvas.restore_region(self._background)
        for artist in sorted(self._moving, key=lambda a: a.get_zorder()):
            if artist.get_visible():
                self.figure.draw_artist(artist)
        pixels = np.asarray(self.canvas.buffer_rgba())
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, format="png", compress_level=1)  # fastest zlib
        return buffer.getvalue()


class TangentPicture(Picture):
    """y = x² with the tangent at x and a green arrow pointing downhill."""

    X_LIMITS = (-4.5, 4.5)
    Y_LIMITS = (-3.0, 21.0)

    def __init__(self) -> None:
        super().__init__(6.0, 3.4)
        self.figure.subplots_adjust(left=0.1, right=0.97, bottom=0.15, top=0.9)
        ax = self.ax = self.figure.add_subplot()
        grid = np.linspace(*self.X_LIMITS, 181)
        ax.plot(grid, grid**2, color=BLUE, linewidth=2, label="y = x²")
        ax.axhline(0, color=GREY, linewidth=0.8)
        (self.tangent,) = ax.plot([], [], color=ORANGE, linewidth=1.6, label="tangent at x")
        (self.point,) = ax.plot([], [], "o", color=ORANGE, markersize=8, zorder=3)
        self.arrow = FancyArrowPatch(
            (0, 0), (1, 0), arrowstyle="-|>", mutation_scale=18, color=GREEN, linewidth=2, zorder=4
        )
        ax.add_patch(self.arrow)
        ax.set(xlim=self.X_LIMITS, ylim=self.Y_LIMITS, xlabel="x", ylabel="y")
        ax.set_title("y = x² and its tangent; the green arrow points downhill", fontsize=11)
        ax.legend(loc="upper center")  # static: no tangent line ever reaches that corner
        self._moves(self.tangent, self.point, self.arrow)

    def update(self, state: TangentState) -> None:
        """Move the tangent, the point and the downhill arrow to ``state.x``."""
        ends = np.array(self.X_LIMITS)
        self.tangent.set_data(ends, state.y + state.slope * (ends - state.x))
        self.point.set_data([state.x], [state.y])
        step = -1.0 if state.slope > 0 else 1.0
        self.arrow.set_positions((state.x, state.y), (state.x + step, state.y))
        self.arrow.set_visible(state.slope != 0)


class NeuronPicture(Picture):
    """Left: the activation with the current h marked. Right: the gradients as bars.

    ``h_limit`` is the largest |h| the sliders reach; the activation is drawn a little
    past it on both sides. Bars are drawn up to ``GRAD_LIMIT`` (where the gradients of
    the lessons' numbers are easy to compare); a larger gradient fills its half of the
    axes, hatched, with its value written inside the bar.
    """

    GRAD_LIMIT = 64.0
    LABELS = ("dL/da", "dL/dh", "dL/dw", "dL/db")

    def __init__(self, h_limit: float = 12.0) -> None:
        super().__init__(8.4, 3.2)
        top = h_limit + 1.5  # room for the marker at the largest h
        self.h_limits = (-top, top)
        self.figure.subplots_adjust(left=0.07, right=0.98, bottom=0.15, top=0.9, wspace=0.25)
        self.curve_ax, self.bar_ax = self.figure.subplots(1, 2)
        ax = self.curve_ax
        ax.axvspan(self.h_limits[0], 0, color=GREY, alpha=0.15)
        middle = top / 2
        ax.text(-middle, 0.96 * top, "gate shut\n(h ≤ 0)", ha="center", va="top", fontsize=9)
        ax.text(middle, 0.96 * top, "gate open\n(h > 0)", ha="center", va="top", fontsize=9)
        (self.curve,) = ax.plot([], [], color=BLUE, linewidth=2)
        (self.marker,) = ax.plot([], [], "o", color=ORANGE, markersize=9, zorder=4)
        self.h_line = ax.axvline(0, color=ORANGE, linestyle=":", linewidth=1.2)
        ax.set(xlim=self.h_limits, ylim=(-0.12 * top, top), xlabel="h = w·x + b", ylabel="a")
        self._slope: float | None = None

        ax = self.bar_ax
        self.bars = list(ax.bar(self.LABELS, [0.0] * 4, color=BLUE))
        self.bar_texts = [ax.text(i, 0.0, "", ha="center", fontsize=9) for i in range(4)]
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set(ylim=(-self.GRAD_LIMIT, self.GRAD_LIMIT))
        ax.set_title("gradients from .backward()", fontsize=11)
        self._moves(self.curve, self.marker, self.h_line, *self.bars, *self.bar_texts)

    def _set_activation(self, negative_slope: float) -> None:
        if negative_slope == self._slope:
            return
        self._slope = negative_slope
        h = np.linspace(*self.h_limits, 201)
        self.curve.set_data(h, np.where(h > 0, h, negative_slope * h))
        title = (
            f"a = LeakyReLU(h), slope {format_short(negative_slope)} for h < 0"
            if negative_slope
            else "a = ReLU(h)"
        )
        self.curve_ax.set_title(title, fontsize=11)
        self.invalidate()

    def update(self, state: NeuronState) -> None:
        """Mark h on the activation and set the four gradient bars."""
        self._set_activation(state.negative_slope)
        self.marker.set_data([state.h], [state.a])
        self.h_line.set_xdata([state.h, state.h])
        values = (state.dL_da, state.dL_dh, state.dL_dw, state.dL_db)
        limit = self.GRAD_LIMIT
        for bar, text, value in zip(self.bars, self.bar_texts, values, strict=True):
            shown = max(-limit, min(limit, value))
            clipped = shown != value
            up = shown >= 0
            bar.set_height(shown)
            bar.set_color(GREY if value == 0 else (BLUE if value > 0 else RED))
            bar.set_hatch("//" if clipped else None)
            bar.set_hatchcolor("white")
            text.set_text(format_short(value))
            text.set_color("white" if clipped else "black")
            text.set_bbox(
                {"facecolor": bar.get_facecolor(), "edgecolor": "none", "pad": 1.5}
                if clipped
                else None
            )
            if clipped:  # inside the end of the bar, which stands for "this or more"
                text.set_y(shown - 4.0 if up else shown + 4.0)
                text.set_verticalalignment("top" if up else "bottom")
            else:
                text.set_y(shown + (1.5 if up else -1.5))
                text.set_verticalalignment("bottom" if up else "top")


class HistoryPicture(Picture):
    """One bar per backward call (the last ten), with one call's gradient dashed."""

    SLOTS = 10

    def __init__(self) -> None:
        super().__init__(5.4, 2.6)
        self.figure.subplots_adjust(left=0.12, right=0.97, bottom=0.2, top=0.88)
        ax = self.ax = self.figure.add_subplot()
        slots = range(1, self.SLOTS + 1)
        self.bars = list(ax.bar(slots, [0.0] * self.SLOTS, color=BLUE))
        self.texts = [ax.text(i, 0.0, "", ha="center", fontsize=8) for i in slots]
        self.true_line = ax.axhline(0.0, color=ORANGE, linestyle="--", linewidth=1.5)
        ax.set(xlim=(0.4, self.SLOTS + 0.6), xlabel="backward call", ylabel="x.grad")
        ax.set_title("x.grad after each backward (dashed: one call's gradient)", fontsize=10)
        self._frame: tuple[float, int] | None = None
        self._moves(*self.bars, *self.texts, self.true_line)

    def update(self, history: Sequence[float], true_gradient: float) -> None:
        """Show the last ten values of ``history``."""
        shown = list(history)[-self.SLOTS :]
        first = max(1, len(history) - self.SLOTS + 1)
        bound = max([6.0 * abs(true_gradient), 1.0] + [1.15 * abs(v) for v in shown])
        if self._frame != (bound, first):  # limits or tick labels change: new background
            self._frame = (bound, first)
            self.ax.set_ylim((0.0, bound) if true_gradient >= 0 else (-bound, 0.0))
            self.ax.set_xticks(
                range(1, self.SLOTS + 1), [str(first + i) for i in range(self.SLOTS)]
            )
            self.invalidate()
        self.true_line.set_ydata([true_gradient, true_gradient])
        for i, (bar, text) in enumerate(zip(self.bars, self.texts, strict=True)):
            value = shown[i] if i < len(shown) else 0.0
            bar.set_height(value)
            text.set_text(format_short(value) if i < len(shown) else "")
            text.set_y(value)
            text.set_verticalalignment("bottom" if value >= 0 else "top")
