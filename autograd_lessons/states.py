"""The numbers behind each widget, computed by PyTorch (pure: no widgets, no plotting).

Tests call these directly; the widgets in ``widgets.py`` only render them. All
tensors are float32, PyTorch's default, so the numbers are the ones a lesson's
own cells print.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = [
    "AccumulationDemo",
    "NeuronState",
    "TangentState",
    "neuron_state",
    "tangent_state",
]

Direction = Literal["step left", "step right", "at the minimum"]
Gate = Literal["open", "shut"]


def _number(value: float) -> Tensor:
    return torch.tensor(float(value), dtype=torch.float32)


def _leaf(value: float) -> Tensor:
    return torch.tensor(float(value), dtype=torch.float32, requires_grad=True)


def _grad(tensor: Tensor) -> float:
    if tensor.grad is None:
        raise RuntimeError("PyTorch filled in no gradient")  # cannot happen: we call backward
    return float(tensor.grad.item()) + 0.0  # + 0.0 turns -0.0 into 0.0


@dataclass(frozen=True)
class TangentState:
    """y = x² at one x: the value, the slope PyTorch found, and which way is downhill."""

    x: float
    y: float
    slope: float
    direction: Direction


def tangent_state(x: float) -> TangentState:
    """y = x**2 and its slope at ``x``, the slope from ``y.backward()`` (never the formula 2x)."""
    leaf = _leaf(x)
    y = leaf**2
    torch.autograd.backward(y)  # the same as y.backward(), but typed
    slope = _grad(leaf)
    direction: Direction = (
        "step left" if slope > 0 else "step right" if slope < 0 else "at the minimum"
    )
    return TangentState(x=float(leaf.item()), y=float(y.item()), slope=slope, direction=direction)


@dataclass(frozen=True)
class NeuronState:
    """One neuron, h = w·x + b, a = ReLU(h), L = (a - target)², forward and backward.

    ``da_dh`` is the ReLU's local slope (1 when the gate is open, 0 or the leak when
    shut); every ``dL_…`` is what PyTorch's backward pass found.
    """

    x: float
    w: float
    b: float
    target: float
    negative_slope: float
    h: float
    a: float
    loss: float
    gate: Gate
    dL_da: float
    da_dh: float
    dL_dh: float
    dL_dw: float
    dL_db: float


def _activation(h: Tensor, negative_slope: float) -> Tensor:
    return F.leaky_relu(h, negative_slope) if negative_slope else torch.relu(h)


def neuron_state(
    x: float, w: float, b: float, target: float, negative_slope: float = 0.0
) -> NeuronState:
    """Forward and backward through the neuron of lesson 3 (LeakyReLU if ``negative_slope``).

    ``w`` and ``b`` are leaves; ``h`` and ``a`` keep their gradients with
    ``retain_grad()``; the local slope ``da/dh`` comes from a separate backward
    through the activation alone.
    """
    w_leaf, b_leaf = _leaf(w), _leaf(b)
    h = w_leaf * _number(x) + b_leaf
    h.retain_grad()
    a = _activation(h, negative_slope)
    a.retain_grad()
    loss = (a - _number(target)) ** 2
    torch.autograd.backward(loss)

    probe = h.detach().requires_grad_()
    torch.autograd.backward(_activation(probe, negative_slope))

    return NeuronState(
        x=float(x),
        w=float(w),
        b=float(b),
        target=float(target),
        negative_slope=float(negative_slope),
        h=float(h.item()) + 0.0,
        a=float(a.item()) + 0.0,
        loss=float(loss.item()),
        gate="open" if h.item() > 0 else "shut",
        dL_da=_grad(a),
        da_dh=_grad(probe),
        dL_dh=_grad(h),
        dL_dw=_grad(w_leaf),
        dL_db=_grad(b_leaf),
    )


class AccumulationDemo:
    """Lesson 5.2: run ``y = x**2; y.backward()`` again and again and watch ``x.grad``.

    Without zeroing, ``x.grad`` reads 6, 12, 18 at x = 3 (it is added to); with
    ``zero_grad=True`` it is zeroed first and reads 6, 6, 6.
    """

    def __init__(self, x: float = 3.0, zero_grad: bool = False) -> None:
        self.x = _leaf(x)
        self.zero_grad = zero_grad
        self.history: list[float] = []

    @property
    def true_gradient(self) -> float:
        """The gradient of one backward pass, dy/dx = 2x (for the explanation text)."""
        return 2 * float(self.x.item())

    def backward_again(self) -> float:
        """One more ``y = x**2; y.backward()``, zeroing ``x.grad`` first if asked; returns it."""
        if self.zero_grad and self.x.grad is not None:
            self.x.grad.zero_()
        y = self.x**2
        torch.autograd.backward(y)
        value = _grad(self.x)
        self.history.append(value)
        return value

    def reset(self) -> None:
        """Forget every backward pass: ``x.grad`` back to None, history empty."""
        self.x.grad = None
        self.history.clear()
