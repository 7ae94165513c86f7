"""Walk and draw the real autograd graph behind a scalar, with every value and gradient.

``walk_graph(z)`` follows ``z.grad_fn`` and ``next_functions`` exactly as
``.backward()`` does and returns one :class:`GraphNode` per backward node (leaves
are the ``AccumulateGrad`` nodes). Gradients are computed with hooks and
``torch.autograd.grad``, so no ``.grad`` is changed. ``draw_graph(z)`` draws it.
"""

from __future__ import annotations

import functools
import math
import sys
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import FrameType

import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.patches import FancyArrowPatch
from matplotlib.text import Text
from torch import Tensor
from torch.autograd.graph import Node

from ._format import format_short
from ._layout import layout
from .tape import Tape

__all__ = ["GraphFreedError", "GraphNode", "Tape", "draw_graph", "walk_graph"]

FREED_HELP = (
    "The graph behind this tensor was freed: .backward() already ran on it without "
    "retain_graph=True, and PyTorch dropped the values it saved for going backwards. "
    "Rebuild the graph (run the forward-pass cell again), or call "
    ".backward(retain_graph=True) if you want to look at the graph afterwards."
)


class GraphFreedError(RuntimeError):
    """The graph's saved values were freed by an earlier ``.backward()``."""


@dataclass(frozen=True)
class GraphNode:
    """One node of the backward graph.

    ``op`` is the backward node's name (``"AddBackward0"``) or ``"leaf"``;
    ``value`` is the forward value coming out of the node (None when unknown: run
    the forward pass inside a :class:`Tape`); ``grad`` is d(root)/d(that value), the
    gradient ``.backward()`` sends into the node; ``inputs`` are the ids of the nodes
    feeding it (a node used twice appears twice). For a node whose output is not one
    number, ``value`` and ``grad`` are None and ``shape`` says what it is.
    """

    id: int
    op: str
    name: str | None
    value: float | None
    grad: float | None
    inputs: tuple[int, ...]
    shape: tuple[int, ...] = ()

    @property
    def is_leaf(self) -> bool:
        return self.op == "leaf"

    @property
    def title(self) -> str:
        """``leaf x``, ``PowBackward0 (y)`` or ``MulBackward0``."""
        if self.is_leaf:
            return f"leaf {self.name}" if self.name else "leaf"
        return f"{self.op} ({self.name})" if self.name else self.op

    def shown(self, number: float | None) -> str:
        """How the drawing writes this node's value or grad: ``12.0``, ``?``, ``4×3 tensor``."""
        if number is not None:
            return format_short(number)
        if self.shape and math.prod(self.shape) != 1:
            return "×".join(str(size) for size in self.shape) + " tensor"
        return "?"

    def __str__(self) -> str:
        return f"{self.title}: value = {self.shown(self.value)}, grad = {self.shown(self.grad)}"


# --- walking -----------------------------------------------------------------------


def _leaf_tensor(node: Node) -> Tensor | None:
    variable = getattr(node, "variable", None)  # only AccumulateGrad nodes have one
    return variable if isinstance(variable, Tensor) else None


def _children(node: Node) -> list[Node]:
    return [child for child, _ in node.next_functions if child is not None]


def _topological(root: Node) -> list[Node]:
    """Every node reachable from ``root``, once, in the order ``.backward()`` can run them.

    Kahn's algorithm: a node comes after every node it feeds; ties follow
    ``next_functions`` order, so the list reads like the backward pass.
    """
    pending: dict[Node, int] = {}
    seen = {root}
    stack = [root]
    while stack:
        for child in _children(stack.pop()):
            pending[child] = pending.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    order: list[Node] = []
    queue = deque([root])
    while queue:
        node = queue.popleft()
        order.append(node)
        for child in _children(node):
            pending[child] -= 1
            if pending[child] == 0:
                queue.append(child)
    return order


def _scalar(tensor: Tensor | None) -> float | None:
    if tensor is None or tensor.numel() != 1 or tensor.is_complex():
        return None
    return float(tensor.detach().item()) + 0.0  # + 0.0 turns -0.0 into 0.0


def _namespace(frame: FrameType | None) -> list[tuple[str, object]]:
    """The caller's variables (locals first, no ``_``/``_3`` caches) and models' parameters."""
    if frame is None:
        return []
    merged: dict[str, object] = {}
    for scope in (frame.f_locals, frame.f_globals):
        for name, value in scope.items():
            if name.startswith("_"):
                continue
            merged.setdefault(name, value)
            if isinstance(value, torch.nn.Module):  # model.weight, model.0.bias, ...
                for inner, parameter in value.named_parameters():
                    merged.setdefault(f"{name}.{inner}", parameter)
    return list(merged.items())


def _tensors_near(items: Iterable[object]) -> list[Tensor]:
    """Tensors among ``items`` and one level inside lists, tuples and dicts."""
    found: list[Tensor] = []
    for item in items:
        if isinstance(item, Tensor):
            found.append(item)
        elif isinstance(item, (list, tuple)):
            found.extend(t for t in item if isinstance(t, Tensor))
        elif isinstance(item, dict):
            found.extend(t for t in item.values() if isinstance(t, Tensor))
    return found


def _check_root(root: Tensor) -> None:
    if not isinstance(root, Tensor):
        raise TypeError(f"expected a tensor, got {type(root).__name__}")
    if root.numel() != 1:
        raise ValueError(
            f"walk_graph needs a scalar (one number, like a loss), but got a tensor of shape "
            f"{tuple(root.shape)}; reduce it first, e.g. with .sum() or .mean()"
        )
    if not root.requires_grad:
        raise ValueError(
            "this tensor has no graph: it does not require grad. Create its leaves with "
            "requires_grad=True and compute it outside torch.no_grad()"
        )


def _gradients(
    root: Tensor, nodes: Sequence[Node], protect: Iterable[Tensor]
) -> dict[Node, Tensor]:
    """d(root)/d(output of each node), without changing any ``.grad``."""
    grads: dict[Node, Tensor] = {}

    def hook_for(node: Node) -> Callable[[tuple[Tensor | None, ...]], None]:
        def hook(grad_outputs: tuple[Tensor | None, ...]) -> None:
            if len(grad_outputs) == 1 and grad_outputs[0] is not None:
                grads[node] = grad_outputs[0].detach()

        return hook

    operations = [node for node in nodes if _leaf_tensor(node) is None]
    leaves = [(node, t) for node in nodes if (t := _leaf_tensor(node)) is not None]
    in_graph = set(nodes)
    # A tensor with .retain_grad() gets its .grad written by any backward pass through
    # its node, torch.autograd.grad included: remember those and put them back.
    retained = {
        id(t): (t, t.grad)
        for t in protect
        if not t.is_leaf and t.retains_grad and t.grad_fn in in_graph
    }
    handles = [node.register_prehook(hook_for(node)) for node in operations]
    try:
        leaf_grads = torch.autograd.grad(
            root,
            [t for _, t in leaves],
            retain_graph=True,
            allow_unused=True,
            materialize_grads=True,
        )
    except RuntimeError as error:
        if "second time" in str(error) or "freed" in str(error):
            raise GraphFreedError(FREED_HELP) from error
        raise
    finally:
        for handle in handles:
            handle.remove()
        for tensor, old_grad in retained.values():
            tensor.grad = old_grad
    for (node, _), grad in zip(leaves, leaf_grads, strict=True):
        grads[node] = grad.detach()
    return grads


def _names(
    named: Sequence[tuple[str, object]], index: Mapping[Node, int]
) -> dict[Node, tuple[str, Tensor]]:
    """Node -> (variable name, tensor) for the variables that are a node's output or leaf."""
    leaf_of = {id(t): node for node in index if (t := _leaf_tensor(node)) is not None}
    found: dict[Node, tuple[str, Tensor]] = {}
    for name, obj in named:
        if not isinstance(obj, Tensor):
            continue
        node = obj.grad_fn if obj.grad_fn is not None else leaf_of.get(id(obj))
        if node is None or node not in index or node in found:
            continue
        if obj.grad_fn is None or obj.output_nr == 0:
            found[node] = (name, obj)
    return found


def _walk(
    root: Tensor,
    tape: Tape | None,
    names: Mapping[str, Tensor] | None,
    frame: FrameType | None,
) -> list[GraphNode]:
    _check_root(root)
    caller = _namespace(frame)
    named = list(names.items()) if names is not None else caller
    protect = _tensors_near(value for _, value in caller)
    protect += [t for _, t in named if isinstance(t, Tensor)]
    if tape is not None:
        protect += tape.live_outputs()

    if root.grad_fn is None:  # the root is itself a leaf
        name = next((n for n, t in named if t is root), None)
        return [GraphNode(0, "leaf", name, _scalar(root), 1.0, ())]

    nodes = _topological(root.grad_fn)
    index = {node: i for i, node in enumerate(nodes)}
    names_of = _names(named, index)
    grads = _gradients(root, nodes, protect)
    result = []
    for node in nodes:
        leaf = _leaf_tensor(node)
        output = leaf if leaf is not None else root if node is root.grad_fn else None
        if output is None and tape is not None:
            output = tape.value_of(node)
        if output is None and node in names_of:
            output = names_of[node][1]
        grad = grads.get(node)
        shape = output.shape if output is not None else grad.shape if grad is not None else ()
        result.append(
            GraphNode(
                id=index[node],
                op="leaf" if leaf is not None else node.name(),
                name=names_of[node][0] if node in names_of else None,
                value=_scalar(output),
                grad=_scalar(grad),
                inputs=tuple(index[child] for child in _children(node)),
                shape=tuple(shape),
            )
        )
    return result


def walk_graph(
    root: Tensor,
    tape: Tape | None = None,
    *,
    names: Mapping[str, Tensor] | None = None,
) -> list[GraphNode]:
    """The backward graph of the scalar ``root``: root first, each node before its inputs.

    Node names come from ``names`` or, by default, from the caller's variables (a leaf
    named ``x``, an intermediate ``y`` whose ``grad_fn`` is the node). Values of unnamed
    intermediates need a ``tape``. No ``.grad`` is modified. Raises ``ValueError`` for a
    non-scalar root and :class:`GraphFreedError` if ``.backward()`` already freed it.
    """
    return _walk(root, tape, names, sys._getframe(1))


# --- drawing -----------------------------------------------------------------------

# Sizes in inches at 100 dpi, the lessons' figure.dpi. Each column is as wide as its
# widest box and the gap between columns is fixed, so a long graph stays narrow enough
# to be shown near its natural size (text shrinks when JupyterLab scales a wide picture
# down to the width of the output area, about 8 inches on a laptop).
GAP_INCHES = 0.3  # between the boxes of neighbouring columns: room for an arrow
ROW_INCHES = 1.05
MARGIN_INCHES = 0.1
MIN_WIDTH_INCHES = 6.0
BOX_FONTSIZE = 9
BOX_PAD = 0.4  # box padding, in units of the font size
TITLE_FONTSIZE = 10
FILL = {"leaf": "#dff3df", "op": "#e1ecf7", "root": "#fde6cf"}


def _box_label(node: GraphNode) -> str:
    return f"{node.title}\nvalue = {node.shown(node.value)}\ngrad = {node.shown(node.grad)}"


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


def _column_centres(
    labels: Mapping[int, str], where: Mapping[int, tuple[int, float]]
) -> tuple[dict[int, float], float]:
    """Centre of each column (inches from the left edge of the leftmost box) and the
    total width of the boxes with their gaps."""
    box_width: dict[int, float] = {}
    for node_id, label in labels.items():
        col = where[node_id][0]
        width = _text_inches(label, BOX_FONTSIZE) + 2 * BOX_PAD * BOX_FONTSIZE / 72 + 0.02
        box_width[col] = max(box_width.get(col, 0.0), width)
    centres: dict[int, float] = {}
    left = 0.0
    for col in sorted(box_width):
        centres[col] = left + box_width[col] / 2
        left += box_width[col] + GAP_INCHES
    return centres, left - GAP_INCHES


def _draw_arrows(ax: Axes, nodes: Sequence[GraphNode], boxes: dict[int, Text]) -> None:
    for node in nodes:
        counts: dict[int, int] = {}
        for source in node.inputs:
            counts[source] = counts.get(source, 0) + 1
        for source, count in counts.items():
            bends = [0.0] if count == 1 else [0.35 * (k - (count - 1) / 2) for k in range(count)]
            for bend in bends:
                start, end = boxes[source], boxes[node.id]
                arrow = FancyArrowPatch(
                    start.get_position(),
                    end.get_position(),
                    arrowstyle="-|>",
                    mutation_scale=12,
                    linewidth=1.2,
                    color="#4a4a4a",
                    connectionstyle=f"arc3,rad={bend}",
                    patchA=start.get_bbox_patch(),
                    patchB=end.get_bbox_patch(),
                    zorder=4,  # after the boxes, so their outlines are known when clipping
                )
                ax.add_patch(arrow)


def draw_graph(
    root: Tensor,
    tape: Tape | None = None,
    names: Mapping[str, Tensor] | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Draw the graph of ``root`` left to right: leaves on the left, ``root`` on the right.

    Each box shows the backward node (or leaf name), ``value = …`` (forward) and
    ``grad = …`` (what ``.backward()`` sends into it); arrows follow the forward pass.
    Returns the figure (displayed when it is the last line of a notebook cell).
    """
    nodes = _walk(root, tape, names, sys._getframe(1))
    where = layout(nodes)
    labels = {node.id: _box_label(node) for node in nodes}
    centres, content = _column_centres(labels, where)
    rows = [row for _, row in where.values()]
    span = max(rows) - min(rows)

    root_name = nodes[0].name or "the output"
    subtitle = f"value = forward result; grad = d({root_name})/d(value), from .backward()"
    if any(node.shown(node.value) == "?" for node in nodes):
        subtitle += "\nvalue ? = not recorded: run the forward pass inside `with Tape() as tape:`"
    title = f"Computation graph of {root_name}\n{subtitle}"

    own_figure = ax is None
    if ax is None:
        wanted = max(content, _text_inches(title, TITLE_FONTSIZE), MIN_WIDTH_INCHES)
        width = wanted + 2 * MARGIN_INCHES
        height = ROW_INCHES * (span + 1) + 0.9
        fig = plt.figure(figsize=(width, height), dpi=100)
        ax = fig.add_axes((0.0, 0.01, 1.0, 1 - 0.8 / height))
        half = width / 2  # one unit of x is one inch, the boxes centred
        ax.set_xlim(content / 2 - half, content / 2 + half)
    else:
        ax.set_xlim(-MARGIN_INCHES, content + MARGIN_INCHES)
    figure = ax.get_figure(root=True)
    assert isinstance(figure, Figure)

    boxes: dict[int, Text] = {}
    for node in nodes:
        col, row = where[node.id]
        kind = "root" if node.id == 0 else ("leaf" if node.is_leaf else "op")
        boxes[node.id] = ax.text(
            centres[col],
            row,
            labels[node.id],
            ha="center",
            va="center",
            fontsize=BOX_FONTSIZE,
            linespacing=1.4,
            zorder=3,
            bbox={
                "boxstyle": f"round,pad={BOX_PAD}",
                "facecolor": FILL[kind],
                "edgecolor": "#555555",
            },
        )
    _draw_arrows(ax, nodes, boxes)
    ax.set_ylim(min(rows) - 0.5, max(rows) + 0.5)
    ax.set_axis_off()
    ax.set_title(title, fontsize=TITLE_FONTSIZE, loc="center", pad=6)
    if own_figure:
        plt.close(figure)  # shown once, as the cell's result, not again by the inline backend
    return figure
