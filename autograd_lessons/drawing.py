"""``draw_graph(z)``: the graph behind a scalar, forward values and the backward pass.

Boxes are the values, left to right as the forward pass made them: data (grey), leaves
(green), operations named as written (``h = w·x + b``), the root (orange). Orange
arrows run right to left, as ``.backward()`` does: each is labelled with the local
slope (``×6``) and the product it sends (``2 × 6 = 12``). A value used on several
paths shows the sum (``9 + 18 = 27``); a zero slope or a zero gradient is red.
The result displays as a picture with a text alternative (``alt``).
"""

from __future__ import annotations

import base64
import functools
import html
import io
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.patches import FancyArrowPatch
from matplotlib.text import Text
from torch import Tensor

from ._format import format_short
from ._layout import layout
from .graph import GraphNode, walk_caller
from .tape import Tape

__all__ = ["GraphDrawing", "describe_graph", "draw_graph"]

# Sizes in inches at 100 dpi, the lessons' figure.dpi. Columns are as wide as their widest
# box; the gap between columns fits the widest edge label.
MIN_GAP_INCHES = 0.5
ROW_INCHES = 1.15
MARGIN_INCHES = 0.1
MIN_WIDTH_INCHES = 6.0
TITLE_INCHES = 0.75
BOX_FONTSIZE = 9
EDGE_FONTSIZE = 8
BOX_PAD = 0.4  # box padding, in units of the font size
TITLE_FONTSIZE = 10
ARC = 0.3  # bend of an arrow that skips a column, so it passes above the boxes between
FILL = {"leaf": "#dff3df", "op": "#e1ecf7", "root": "#fde6cf", "data": "#eeeeee"}
BACKWARD, DEAD, INK, MUTED = "#c45100", "#c62828", "#222222", "#666666"


def _slope_text(slope: float) -> str:
    return f"×{_plain(slope)}"


def _plain(number: float) -> str:
    """``6``, ``0.5``, ``-4``: whole numbers without ``.0`` inside worked products."""
    text = format_short(number).removesuffix(".0")
    return f"({text})" if text.startswith("-") else text


def edge_label(incoming: float, slope: float) -> str:
    """``×6`` over ``2 × 6 = 12``: the local slope and what the edge sends."""
    return f"{_slope_text(slope)}\n{_plain(incoming)}×{_plain(slope)} = {_plain(incoming * slope)}"


def _box_label(node: GraphNode, root: bool) -> str:
    if node.is_data:
        return f"{node.written} (data)\nvalue {node.shown(node.value)}\nno gradient"
    grad = node.grad_text()
    return (
        f"{node.written}\nvalue {node.shown(node.value)}\ngrad {grad}{' (start)' if root else ''}"
    )


@functools.cache
def _measuring_renderer() -> RendererAgg:
    return RendererAgg(1, 1, 72)  # at 72 dpi one pixel is one point


def _text_inches(text: str, fontsize: float) -> float:
    """Width of the widest line of ``text`` in inches, in matplotlib's default font."""
    renderer = _measuring_renderer()
    prop = FontProperties(size=fontsize)
    widths = (
        renderer.get_text_width_height_descent(line, prop, ismath=False)[0]
        for line in text.splitlines() or [""]
    )
    return float(max(widths)) / 72


@dataclass(frozen=True)
class _Edge:
    consumer: int
    source: int
    slope: float | None
    incoming: float | None
    bend: float

    @property
    def label(self) -> str | None:
        if self.slope is None or self.incoming is None:
            return None
        return edge_label(self.incoming, self.slope)


def _edges(nodes: Sequence[GraphNode], where: Mapping[int, tuple[int, float]]) -> list[_Edge]:
    by_id = {node.id: node for node in nodes}
    edges: list[_Edge] = []
    for node in nodes:
        slopes = node.slopes or (None,) * len(node.inputs)
        seen: dict[int, int] = {}
        for source, slope in zip(node.inputs, slopes, strict=True):
            k = seen[source] = seen.get(source, -1) + 1
            skips = where[node.id][0] - where[source][0] > 1
            repeats = node.inputs.count(source)
            bend = ARC if skips else 0.0
            if repeats > 1:
                bend = 0.35 * (k - (repeats - 1) / 2) + bend
            edges.append(_Edge(node.id, source, slope, by_id[node.id].grad, bend))
    return edges


@dataclass
class GraphDrawing:
    """A drawn graph: ``figure`` and its text alternative ``alt``.

    In a notebook it displays as an ``<img>`` with ``alt`` (and as PNG and plain text
    for other front ends).
    """

    figure: Figure
    alt: str

    def png(self) -> bytes:
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png", dpi=100, facecolor="white")
        return buffer.getvalue()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, str]:
        png = base64.b64encode(self.png()).decode("ascii")
        page = f'<img src="data:image/png;base64,{png}" alt="{html.escape(self.alt)}">'
        return {"text/html": page, "image/png": png, "text/plain": self.alt}


def describe_graph(nodes: Sequence[GraphNode]) -> str:
    """The text alternative: forward values left to right, then the backward pass."""
    by_id = {node.id: node for node in nodes}
    root = nodes[0]
    forward = [
        f"{n.written} = {n.shown(n.value)}{' (data)' if n.is_data else ''}"
        for n in reversed(nodes)
        if n.id != root.id
    ] + [f"{root.written} = {root.shown(root.value)}"]
    backward = [f"{root.written.split(' = ')[0]} starts with gradient 1"]
    for node in nodes:
        for source, slope in zip(node.inputs, node.slopes or (), strict=False):
            if slope is None or node.grad is None:
                continue
            to = by_id[source].written.split(" = ")[0]
            backward.append(
                f"to {to}: local slope {format_short(slope)}, "
                f"{format_short(node.grad)} × {format_short(slope)} = "
                f"{format_short(node.grad * slope)}" + (" (gradient stops)" if slope == 0 else "")
            )
    totals = [
        f"{n.written.split(' = ')[0]} gets {n.grad_text()}"
        for n in nodes
        if (n.is_leaf or len(n.parts) > 1) and n.grad is not None
    ]
    return (
        f"Computation graph of {root.written.split(' = ')[0]}. "
        f"Forward, left to right: {'; '.join(forward)}. "
        f"Backward, right to left: {'; '.join(backward)}. "
        + (f"Result: {'; '.join(totals)}." if totals else "")
    )


def draw_graph(
    root: Tensor,
    tape: Tape | None = None,
    names: Mapping[str, Tensor] | None = None,
    ax: Axes | None = None,
) -> GraphDrawing:
    """Draw the graph of ``root``: values left to right, gradients right to left.

    Boxes show what the learner wrote (``h = w·x + b``, with a :class:`Tape`), the
    forward value and the gradient; each backward arrow shows the local slope and the
    product it sends. Gradients come from ``torch.autograd.grad`` (no ``.grad`` is
    changed). Displayed when it is the last line of a notebook cell.
    """
    nodes = walk_caller(root, tape, names, sys._getframe(1))
    where = layout(nodes)
    labels = {node.id: _box_label(node, node.id == nodes[0].id) for node in nodes}
    edges = _edges(nodes, where)
    edge_widths = [_text_inches(e.label, EDGE_FONTSIZE) for e in edges if e.label]
    gap = max([MIN_GAP_INCHES] + [w + 0.25 for w in edge_widths])

    box_width: dict[int, float] = {}
    for node_id, label in labels.items():
        col = where[node_id][0]
        width = _text_inches(label, BOX_FONTSIZE) + 2 * BOX_PAD * BOX_FONTSIZE / 72 + 0.02
        box_width[col] = max(box_width.get(col, 0.0), width)
    centres: dict[int, float] = {}
    left = 0.0
    for col in sorted(box_width):
        centres[col] = left + box_width[col] / 2
        left += box_width[col] + gap
    content = left - gap

    rows = [row for _, row in where.values()]
    low, high = min(rows) - 0.5, max(rows) + 0.5
    if any(e.bend for e in edges):
        high += 0.6  # room for arrows bent over the boxes
    root_name = nodes[0].written.split(" = ")[0]
    subtitle = (
        "values flow left to right; gradients flow back along the orange arrows, each labelled"
        "\n×(local slope) and incoming × slope = sent; computed with torch.autograd.grad"
        " (no .grad changed)"
    )
    if any(node.shown(node.value) == "?" for node in nodes):
        subtitle += "\nvalue ? = not recorded: run the forward pass inside `with Tape() as tape:`"
    title = f"Computation graph of {root_name}\n{subtitle}"
    title_lines = title.count("\n") + 1

    own_figure = ax is None
    if ax is None:
        wanted = max(content, _text_inches(title, TITLE_FONTSIZE) + 0.4, MIN_WIDTH_INCHES)
        width = wanted + 2 * MARGIN_INCHES
        rows_height = ROW_INCHES * (high - low)
        top = 0.2 * title_lines + 0.15
        height = rows_height + top + 0.05
        fig = plt.figure(figsize=(width, height), dpi=100, facecolor="white")
        ax = fig.add_axes((0.0, 0.05 / height, 1.0, rows_height / height))
        half = width / 2
        ax.set_xlim(content / 2 - half, content / 2 + half)
    else:
        ax.set_xlim(-MARGIN_INCHES, content + MARGIN_INCHES)
    ax.set_ylim(low, high)
    figure = ax.get_figure(root=True)
    assert isinstance(figure, Figure)

    boxes: dict[int, Text] = {}
    for node in nodes:
        col, row = where[node.id]
        kind = (
            "root"
            if node.id == nodes[0].id
            else "data"
            if node.is_data
            else "leaf"
            if node.is_leaf
            else "op"
        )
        dead = node.grad == 0.0
        boxes[node.id] = ax.text(
            centres[col],
            row,
            labels[node.id],
            ha="center",
            va="center",
            fontsize=BOX_FONTSIZE,
            linespacing=1.4,
            color=DEAD if dead else INK,
            zorder=3,
            bbox={
                "boxstyle": f"round,pad={BOX_PAD}",
                "facecolor": FILL[kind],
                "edgecolor": DEAD if dead else "#555555",
                "linestyle": "--" if node.is_data else "-",
                "linewidth": 1.6 if dead else 1.0,
            },
        )
    _draw_edges(ax, edges, boxes, nodes)
    ax.set_axis_off()
    ax.set_title(title, fontsize=TITLE_FONTSIZE, loc="center", pad=6, color=INK)
    if own_figure:
        plt.close(figure)  # shown once, as the cell's result, not again by the inline backend
    return GraphDrawing(figure, describe_graph(nodes))


def _draw_edges(
    ax: Axes, edges: Sequence[_Edge], boxes: dict[int, Text], nodes: Sequence[GraphNode]
) -> None:
    by_id = {node.id: node for node in nodes}
    for edge in edges:
        start, end = boxes[edge.consumer], boxes[edge.source]
        data = by_id[edge.source].is_data or edge.slope is None
        dead = edge.slope == 0.0
        colour = MUTED if data else DEAD if dead else BACKWARD
        ax.add_patch(
            FancyArrowPatch(
                start.get_position(),
                end.get_position(),
                arrowstyle="-" if data else "-|>",
                mutation_scale=14,
                linewidth=1.0 if data else 1.6,
                linestyle="--" if data else "-",
                color=colour,
                connectionstyle=f"arc3,rad={edge.bend}",
                patchA=start.get_bbox_patch(),
                patchB=end.get_bbox_patch(),
                zorder=4,  # after the boxes, so their outlines are known when clipping
            )
        )
        label = edge.label
        if label is None:
            continue
        if dead:
            gate = by_id[edge.consumer].op.startswith("Relu")
            label += "\ngate shut" if gate else "\ngradient stops"
        (x0, y0), (x1, y1) = start.get_position(), end.get_position()
        # midpoint of the arc3 curve: half way to its control point (in inches)
        y0i, y1i = y0 * ROW_INCHES, y1 * ROW_INCHES
        mx, my = (x0 + x1) / 2, (y0i + y1i) / 2
        mx += 0.5 * edge.bend * (y1i - y0i)
        my -= 0.5 * edge.bend * (x1 - x0)
        ax.text(
            mx,
            (my + 0.05) / ROW_INCHES,  # just above the arrow, which stays visible
            label,
            ha="center",
            va="bottom",
            fontsize=EDGE_FONTSIZE,
            color=colour,
            zorder=5,
            bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none"},
        )
