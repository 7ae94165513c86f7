"""The neuron of lessons 3 and 4, h = w·x + b, a = ReLU(h), L = (a − y)²: its program and
the parts exercises 03 and 04 both ask (forward pass, dL/da, the ReLU's slope, dL/dh)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograder.core.spec import Gate, Part, slope, upstream, value

if TYPE_CHECKING:
    from autograder.core.engine import Tape

SQUARE = slope("2", "the 2 of the square (d (a − y)²/da = 2(a − y))")


def neuron(t: Tape) -> None:
    """The program: h, a and L."""
    import torch

    x, w, b, y = t.given("x", "w", "b", "y")
    h = t.node("h", w * x + b)
    a = t.node("a", torch.relu(h))
    t.node("L", (a - y) ** 2)


def forward_parts(a_hint: str, loss_hint: str) -> tuple[Part, ...]:
    """Parts: h, a and L."""
    return (
        Part(
            "h",
            "h",
            "forward",
            "h = w·x + b.",
            "w·x + b",
            of=("h",),
            solution="w * x + b",
            title="the pre-activation h",
        ),
        Part(
            "a",
            "a",
            "forward",
            a_hint,
            "ReLU(h) = max(h, 0)",
            of=("a",),
            solution="max(h, 0)",
            title="the activation a",
        ),
        Part(
            "L",
            "L",
            "forward",
            loss_hint,
            "(a − y)²",
            of=("L",),
            solution="(a - y) ** 2",
            title="the loss L",
        ),
    )


def backward_parts(gate: Gate, dL_da_hint: str, da_dh_hint: str) -> tuple[Part, ...]:
    """Parts: dL/da, the ReLU's local slope (open: 1, shut: 0) and dL/dh."""
    return (
        Part(
            "dL_da",
            "dL/da",
            "gradient",
            dL_da_hint,
            "2(a − y)",
            of=("L", "a"),
            factors=(SQUARE, value("a - y")),
            title="the gradient at a",
        ),
        Part(
            "da_dh",
            "da/dh",
            "local_slope",
            da_dh_hint,
            "1 if h > 0, else 0",
            of=("a", "h"),
            gate=gate,
            solution="1.0" if gate == "open" else "0.0",
            title="the local slope of the ReLU",
        ),
        Part(
            "dL_dh",
            "dL/dh",
            "gradient",
            "dL/dh = dL/da × da/dh.",
            "dL/da × da/dh",
            of=("L", "h"),
            gate=gate,
            factors=(upstream("dL_da"), upstream("da_dh")),
            title="the gradient at h",
        ),
    )
