"""The neuron of lessons 3 and 4, h = w·x + b, a = ReLU(h), L = (a − y)²: its program, the
givens of the open neuron (exercises 03 and 09) and the parts exercises 03 and 04 both ask
(forward pass, dL/da, the ReLU's slope, dL/dh)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograder.core.spec import Gate, Given, Part, pairwise_different, slope, upstream, value

if TYPE_CHECKING:
    from autograder.core.tape import Tape

SQUARE = slope("2", "the 2 of the square (d (a − y)²/da = 2(a − y))")
OPEN = slope("1", "the open ReLU (da/dh = 1)")

OPEN_NEURON_GIVENS = (
    Given(
        "x",
        (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0),
        lesson=2.0,
        meaning="input",
    ),
    Given(
        "w",
        (
            3.0,
            4.0,
            5.0,
            6.0,
            7.0,
            8.0,
            9.0,
            2.0,
            -2.0,
            -3.0,
            -4.0,
            -5.0,
            -6.0,
            -7.0,
            -8.0,
            -9.0,
        ),
        lesson=3.0,
        meaning="weight",
    ),
    Given(
        "b",
        (
            -1.0,
            1.0,
            2.0,
            3.0,
            4.0,
            5.0,
            6.0,
            7.0,
            8.0,
            9.0,
            -2.0,
            -3.0,
            -4.0,
            -5.0,
            -6.0,
            -7.0,
            -8.0,
            -9.0,
        ),
        lesson=-1.0,
        meaning="bias",
    ),
    Given(
        "y",
        (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0),
        lesson=2.0,
        meaning="target",
    ),
)
"""x, w, b and y of the open neuron: the lesson's numbers and what learners' are drawn from."""

OPEN_NEURON_CONSTRAINTS = (
    ("the ReLU is open: h = w·x + b > 0", lambda g: g["w"] * g["x"] + g["b"] > 0),
    ("the loss is not zero", lambda g: g["w"] * g["x"] + g["b"] != g["y"]),
    pairwise_different("x", "w", "b", "y"),
)
"""Every learner's neuron is open (h > 0) and its loss is not zero."""


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
