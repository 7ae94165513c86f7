"""03: one neuron, h = w·x + b, a = ReLU(h), L = (a − y)², with the ReLU open."""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograder.spec import (
    ExerciseSpec,
    Given,
    Part,
    given,
    pairwise_different,
    slope,
    upstream,
    value,
)

if TYPE_CHECKING:
    from autograder.spec_engine import Tape

SQUARE = slope("2", "the 2 of the square (d (a − y)²/da = 2(a − y))")


def program(t: Tape) -> None:
    """The neuron and its loss."""
    import torch

    x, w, b, y = t.given("x", "w", "b", "y")
    h = t.node("h", w * x + b)
    a = t.node("a", torch.relu(h))
    t.node("L", (a - y) ** 2)


SPEC = ExerciseSpec(
    name="03_a_neuron_by_hand",
    title="A neuron by hand",
    lesson="03_a_neuron_by_hand",
    givens=(
        Given("x", (2.0, 3.0, 4.0, 5.0, -3.0, -4.0, -5.0), lesson=2.0, meaning="input"),
        Given("w", (3.0, 4.0, 5.0, 6.0, 7.0, -3.0, -4.0, -5.0), lesson=3.0, meaning="weight"),
        Given("b", (-1.0, 2.0, 3.0, 5.0, -2.0, -3.0, -5.0, -7.0), lesson=-1.0, meaning="bias"),
        Given("y", (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 9.0), lesson=2.0, meaning="target"),
    ),
    constraints=(
        ("the ReLU is open: h = w·x + b > 0", lambda g: g["w"] * g["x"] + g["b"] > 0),
        ("the loss is not zero", lambda g: g["w"] * g["x"] + g["b"] != g["y"]),
        pairwise_different("x", "w", "b", "y"),
    ),
    program=program,
    parts=(
        Part("h", "h", "forward", "h = w·x + b.", "w·x + b", of=("h",), solution="w * x + b",
             title="the pre-activation h"),
        Part("a", "a", "forward", "ReLU keeps a positive h unchanged.", "ReLU(h) = max(h, 0)",
             of=("a",), solution="max(h, 0)", title="the activation a"),
        Part("L", "L", "forward", "L = (a - y)² with the target y.", "(a − y)²", of=("L",),
             solution="(a - y) ** 2", title="the loss L"),
        Part(
            "dL_da",
            "dL/da",
            "gradient",
            "The slope of (a - y)² is 2(a - y).",
            "2(a − y)",
            of=("L", "a"),
            factors=(SQUARE, value("a - y")),
            title="the gradient at a",
        ),
        Part(
            "da_dh",
            "da/dh",
            "local_slope",
            "ReLU's slope is 1 where h > 0 and 0 where h < 0.",
            "1 if h > 0, else 0",
            of=("a", "h"),
            gate="open",
            solution="1.0",
            title="the local slope of the ReLU",
        ),
        Part(
            "dL_dh",
            "dL/dh",
            "gradient",
            "dL/dh = dL/da × da/dh.",
            "dL/da × da/dh",
            of=("L", "h"),
            gate="open",
            factors=(upstream("dL_da"), upstream("da_dh")),
            title="the gradient at h",
        ),
        Part(
            "dh_dw",
            "dh/dw",
            "local_slope",
            "h = w·x + b: its slope with respect to w is x.",
            "how much h moves per unit of w",
            of=("h", "w"),
            factors=(given("x"),),
            title="the local slope of h with respect to w",
        ),
        Part(
            "dh_db",
            "dh/db",
            "local_slope",
            "h = w·x + b: its slope with respect to b is 1.",
            "how much h moves per unit of b",
            of=("h", "b"),
            solution="1.0",
            title="the local slope of h with respect to b",
        ),
        Part(
            "dL_dw",
            "dL/dw",
            "gradient",
            "dL/dw = dL/dh × dh/dw, and dh/dw = x.",
            "dL/dh × dh/dw",
            of=("L", "w"),
            gate="open",
            factors=(upstream("dL_dh"), upstream("dh_dw")),
            title="the gradient of the weight",
        ),
        Part(
            "dL_db",
            "dL/db",
            "gradient",
            "dL/db = dL/dh × dh/db, and dh/db = 1.",
            "dL/dh × dh/db",
            of=("L", "b"),
            gate="open",
            factors=(upstream("dL_dh"), upstream("dh_db")),
            title="the gradient of the bias",
        ),
    ),
    written=(("why_dw_and_db_differ", 1),),
)
