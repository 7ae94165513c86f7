"""``Tape``: remember the forward value of every operation, keyed by its backward node.

PyTorch's graph keeps the *instructions* for going backwards (``grad_fn`` nodes),
not the values that flowed forwards. A ``Tape`` records those values while the
forward pass runs, so the graph drawing can show them::

    with Tape() as tape:
        y = x**2
        z = 2 * y + 1
    tape.value_of(z.grad_fn)   # tensor(19.)
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor
from torch.autograd.graph import Node
from torch.overrides import TorchFunctionMode

__all__ = ["Operation", "Tape"]


@dataclass(frozen=True)
class Operation:
    """What the learner wrote: the function's name (``__mul__``, ``relu``) and its operands
    (tensors as they were passed, Python numbers as numbers)."""

    func: str
    operands: tuple[object, ...]


def _tensors_in(result: object) -> Iterator[Tensor]:
    if isinstance(result, Tensor):
        yield result
    elif isinstance(result, (tuple, list)):
        for item in result:
            if isinstance(item, Tensor):
                yield item


class Tape(TorchFunctionMode):
    """Context manager recording the output of every PyTorch operation run inside it.

    Values are stored detached and copied, keyed by the output's ``grad_fn``, with the
    operation that made them (its name and operands, for the drawing's labels); only
    outputs that are part of a graph (``grad_fn`` is not None) are kept. The tape
    holds on to those nodes, so keep it only as long as you need the drawing.
    """

    def __init__(self) -> None:
        super().__init__()
        self._values: dict[Node, Tensor] = {}
        self._operations: dict[Node, Operation] = {}
        self._outputs: list[weakref.ref[Tensor]] = []

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: Sequence[type],
        args: Sequence[Any] = (),
        kwargs: Mapping[str, Any] | None = None,
    ) -> Any:
        result = func(*args, **(kwargs or {}))
        for tensor in _tensors_in(result):
            node = tensor.grad_fn
            if node is not None and tensor.output_nr == 0:
                with torch.no_grad():
                    self._values[node] = tensor.detach().clone()
                operands = tuple(
                    a
                    for a in args
                    if isinstance(a, (Tensor, int, float)) and not isinstance(a, bool)
                )
                name = getattr(func, "__name__", type(func).__name__)
                self._operations[node] = Operation(name, operands)
                self._outputs.append(weakref.ref(tensor))
        return result

    def value_of(self, node: Node | None) -> Tensor | None:
        """The recorded output of the operation whose backward node is ``node``."""
        if node is None:
            return None
        return self._values.get(node)

    def operation_of(self, node: Node | None) -> Operation | None:
        """The function and operands that produced the output of ``node``, if recorded."""
        return None if node is None else self._operations.get(node)

    def live_outputs(self) -> list[Tensor]:
        """The recorded output tensors that still exist (used to protect their ``.grad``)."""
        alive = (ref() for ref in self._outputs)
        return [tensor for tensor in alive if tensor is not None]

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, node: object) -> bool:
        return node in self._values
