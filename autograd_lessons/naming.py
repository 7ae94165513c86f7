"""What the learner called each node of a graph, and each operation as written.

The caller's variables (``namespace``) name the tensors that are a node's output or a
leaf (``node_names``); a ``Tape`` of the forward pass gives each operation as written
(``w·x + b``) and the plain tensors it used (``data_operands``). ``graph.walk_graph``
puts these names on the nodes it walks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from types import FrameType

import torch
from torch import Tensor
from torch.autograd.graph import Node

from ._format import format_short
from .expressions import operation_text
from .tape import Tape


def leaf_tensor(node: Node) -> Tensor | None:
    variable = getattr(node, "variable", None)  # only AccumulateGrad nodes have one
    return variable if isinstance(variable, Tensor) else None


def scalar(tensor: Tensor | None) -> float | None:
    if tensor is None or tensor.numel() != 1 or tensor.is_complex():
        return None
    return float(tensor.detach().item()) + 0.0  # + 0.0 turns -0.0 into 0.0


def namespace(frame: FrameType | None) -> list[tuple[str, object]]:
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


def tensors_near(items: Iterable[object]) -> list[Tensor]:
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


def node_names(
    named: Sequence[tuple[str, object]], index: Mapping[Node, int]
) -> dict[Node, tuple[str, Tensor]]:
    """Node -> (variable name, tensor) for the variables that are a node's output or leaf."""
    leaf_of = {id(t): node for node in index if (t := leaf_tensor(node)) is not None}
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


def data_operands(
    nodes: Sequence[Node], tape: Tape | None, index: Mapping[Node, int]
) -> list[tuple[int, Tensor]]:
    """(consumer id, tensor) for every tensor without a graph that a recorded operation used."""
    found: list[tuple[int, Tensor]] = []
    if tape is None:
        return found
    for node in nodes:
        operation = tape.operation_of(node)
        for operand in operation.operands if operation else ():
            if isinstance(operand, Tensor) and not operand.requires_grad:
                found.append((index[node], operand))
    return found


def _operand_text(operand: object, text_of: Callable[[Tensor], str | None]) -> str:
    if isinstance(operand, Tensor):
        known = text_of(operand)
        if known is not None:
            return known
        number = scalar(operand)
        return format_short(number) if number is not None else "?"
    if isinstance(operand, int):
        return str(operand)
    return format_short(float(operand)) if isinstance(operand, float) else "?"


def written_expressions(
    nodes: Sequence[Node],
    tape: Tape | None,
    names: Mapping[int, str],
    index: Mapping[Node, int],
    data_ids: Mapping[int, int],
) -> dict[int, str]:
    """Node id -> the operation as written (``w·x + b``), innermost first."""
    written: dict[int, str] = {}
    if tape is None:
        return written
    leaf_ids = {id(t): index[n] for n in nodes if (t := leaf_tensor(n)) is not None}

    def text_of(tensor: Tensor) -> str | None:
        node_id = (
            index.get(tensor.grad_fn)
            if tensor.grad_fn is not None
            else leaf_ids.get(id(tensor), data_ids.get(id(tensor)))
        )
        if node_id is None:
            return None
        return names.get(node_id) or written.get(node_id)

    for node in reversed(nodes):  # inputs before the operations that use them
        operation = tape.operation_of(node)
        if operation is None:
            continue
        texts = [_operand_text(o, text_of) for o in operation.operands]
        numeric = [not isinstance(o, Tensor) for o in operation.operands]
        text = operation_text(operation.func, texts, numeric)
        if text is not None:
            written[index[node]] = text
    return written
