"""Walk and draw the real autograd graph behind a scalar, with every value and gradient.

``walk_graph(z)`` follows ``z.grad_fn`` and ``next_functions`` exactly as
``.backward()`` does and returns one :class:`GraphNode` per backward node (leaves
are the ``AccumulateGrad`` nodes). Gradients are computed with hooks and
``torch.autograd.grad``, so no ``.grad`` is changed. ``drawing.draw_graph(z)`` draws it.
"""

from __future__ import annotations

import math
import sys
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import FrameType

import torch
from torch import Tensor
from torch.autograd.graph import Node

from ._format import format_short
from .expressions import short_op
from .naming import (
    data_operands,
    leaf_tensor,
    namespace,
    node_names,
    scalar,
    tensors_near,
    written_expressions,
)
from .tape import Tape

__all__ = ["GraphFreedError", "GraphNode", "Tape", "walk_graph", "walk_caller"]

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

    ``op`` is the backward node's name (``"AddBackward0"``), ``"leaf"`` or ``"data"``
    (a tensor without ``requires_grad`` that an operation used; only known with a
    :class:`Tape`); ``value`` is the forward value coming out of the node (None when
    unknown: run the forward pass inside a :class:`Tape`); ``grad`` is d(root)/d(that
    value), the gradient ``.backward()`` sends into the node (None for data);
    ``inputs`` are the ids of the nodes feeding it (a node used twice appears twice),
    ``slopes`` the local slope towards each of them (None where no gradient flows);
    ``parts`` what each edge into this node brought (several when the node's value is
    used on several paths: ``grad`` is their sum); ``expression`` the operation as the
    learner wrote it (``w·x + b``, with a Tape). For a node whose output is not one
    number, ``value`` and ``grad`` are None and ``shape`` says what it is.
    """

    id: int
    op: str
    name: str | None
    value: float | None
    grad: float | None
    inputs: tuple[int, ...]
    shape: tuple[int, ...] = ()
    slopes: tuple[float | None, ...] = ()
    parts: tuple[float, ...] = ()
    expression: str | None = None

    @property
    def is_leaf(self) -> bool:
        return self.op == "leaf"

    @property
    def is_data(self) -> bool:
        return self.op == "data"

    @property
    def title(self) -> str:
        """``leaf x``, ``PowBackward0 (y)`` or ``MulBackward0``."""
        if self.is_leaf or self.is_data:
            return f"{self.op} {self.name}" if self.name else self.op
        return f"{self.op} ({self.name})" if self.name else self.op

    @property
    def written(self) -> str:
        """How the learner wrote it: ``h = w·x + b``, ``w·x``, ``w``; else the node's name."""
        if self.name and self.expression and not (self.is_leaf or self.is_data):
            return f"{self.name} = {self.expression}"
        return self.name or self.expression or short_op(self.op)

    def shown(self, number: float | None) -> str:
        """How the drawing writes this node's value or grad: ``12.0``, ``?``, ``4×3 tensor``."""
        if number is not None:
            return format_short(number)
        if self.shape and math.prod(self.shape) != 1:
            return "×".join(str(size) for size in self.shape) + " tensor"
        return "?"

    def grad_text(self) -> str:
        """``12.0``, or the sum over paths: ``9.0 + 18.0 = 27.0``."""
        if len(self.parts) > 1 and self.grad is not None:
            return " + ".join(format_short(p) for p in self.parts) + f" = {self.shown(self.grad)}"
        return self.shown(self.grad)

    def __str__(self) -> str:
        if self.is_data:
            return f"{self.title}: value = {self.shown(self.value)}, no grad (data)"
        return f"{self.title}: value = {self.shown(self.value)}, grad = {self.shown(self.grad)}"


# --- walking -----------------------------------------------------------------------


def _children(node: Node) -> list[Node]:
    return [child for child, _ in node.next_functions if child is not None]


def _children_with_slots(node: Node) -> list[Node | None]:
    """``next_functions`` in order, None where an input needs no gradient."""
    return [child for child, _ in node.next_functions]


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

    operations = [node for node in nodes if leaf_tensor(node) is None]
    leaves = [(node, t) for node in nodes if (t := leaf_tensor(node)) is not None]
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


def _local_slopes(node: Node, grad: Tensor | None) -> list[float | None]:
    """d(output)/d(input) for each ``next_functions`` slot of a one-number operation.

    The node is called with an incoming gradient of 1, as ``.backward()`` would call
    it: it answers with its local slopes (None where no gradient flows).
    """
    slots = len(node.next_functions)
    if grad is None or grad.numel() != 1:
        return [None] * slots
    try:
        answer = node(torch.ones_like(grad))  # type: ignore[operator]  # nodes are callable
    except (RuntimeError, TypeError):  # several outputs, or nothing saved to go back with
        return [None] * slots
    answers = (answer,) if isinstance(answer, Tensor) else tuple(answer)
    return [scalar(a) if isinstance(a, Tensor) else None for a in answers][:slots]


def _walk(
    root: Tensor,
    tape: Tape | None,
    names: Mapping[str, Tensor] | None,
    frame: FrameType | None,
) -> list[GraphNode]:
    _check_root(root)
    caller = namespace(frame)
    named = list(names.items()) if names is not None else caller
    protect = tensors_near(value for _, value in caller)
    protect += [t for _, t in named if isinstance(t, Tensor)]
    if tape is not None:
        protect += tape.live_outputs()

    if root.grad_fn is None:  # the root is itself a leaf
        name = next((n for n, t in named if t is root), None)
        return [GraphNode(0, "leaf", name, scalar(root), 1.0, ())]

    nodes = _topological(root.grad_fn)
    index = {node: i for i, node in enumerate(nodes)}
    names_of = node_names(named, index)
    grads = _gradients(root, nodes, protect)

    # Data: tensors without requires_grad that recorded operations used, one node each.
    data: dict[int, tuple[int, Tensor]] = {}  # id(tensor) -> (node id, tensor)
    data_inputs: dict[int, list[int]] = {}
    for consumer, tensor in data_operands(nodes, tape, index):
        if id(tensor) not in data:
            data[id(tensor)] = (len(nodes) + len(data), tensor)
        data_inputs.setdefault(consumer, []).append(data[id(tensor)][0])
    data_names = {id(t): n for n, t in named if isinstance(t, Tensor) and not t.requires_grad}
    name_by_id = {index[node]: name for node, (name, _) in names_of.items()}
    name_by_id.update({i: data_names[key] for key, (i, _) in data.items() if key in data_names})
    expressions = written_expressions(
        nodes, tape, name_by_id, index, {key: i for key, (i, _) in data.items()}
    )

    slopes = {
        node: _local_slopes(node, grads.get(node)) for node in nodes if leaf_tensor(node) is None
    }
    parts: dict[Node, list[float]] = {}
    for node in nodes:  # consumers come before their inputs
        incoming = scalar(grads.get(node))
        for child, slope in zip(_children_with_slots(node), slopes.get(node, []), strict=False):
            if child is not None and incoming is not None and slope is not None:
                parts.setdefault(child, []).append(incoming * slope + 0.0)

    result = []
    for node in nodes:
        leaf = leaf_tensor(node)
        output = leaf if leaf is not None else root if node is root.grad_fn else None
        if output is None and tape is not None:
            output = tape.value_of(node)
        if output is None and node in names_of:
            output = names_of[node][1]
        grad = grads.get(node)
        shape = output.shape if output is not None else grad.shape if grad is not None else ()
        own_slopes = [
            slope
            for child, slope in zip(_children_with_slots(node), slopes.get(node, []), strict=False)
            if child is not None
        ]
        result.append(
            GraphNode(
                id=index[node],
                op="leaf" if leaf is not None else node.name(),
                name=name_by_id.get(index[node]),
                value=scalar(output),
                grad=scalar(grad),
                inputs=tuple(index[child] for child in _children(node))
                + tuple(data_inputs.get(index[node], ())),
                shape=tuple(shape),
                slopes=tuple(own_slopes) + (None,) * len(data_inputs.get(index[node], ())),
                parts=tuple(parts.get(node, ())),
                expression=expressions.get(index[node]),
            )
        )
    for key, (node_id, tensor) in data.items():
        result.append(
            GraphNode(
                node_id, "data", data_names.get(key), scalar(tensor), None, (), tuple(tensor.shape)
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


def walk_caller(
    root: Tensor,
    tape: Tape | None,
    names: Mapping[str, Tensor] | None,
    frame: FrameType | None,
) -> list[GraphNode]:
    """:func:`walk_graph` naming nodes from ``frame``'s variables (for ``draw_graph``)."""
    return _walk(root, tape, names, frame)
