"""04: the neuron of 03 with its ReLU shut (h < 0), then the same numbers through a LeakyReLU."""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograder.core.spec import (
    ExerciseSpec,
    Given,
    Part,
    given,
    pairwise_different,
    upstream,
    value,
)
from autograder.specs.neuron import SQUARE, backward_parts, forward_parts, neuron

if TYPE_CHECKING:
    from autograder.core.tape import Tape

SHUT = "Everything behind a shut ReLU is multiplied by its slope, 0."


def program(t: Tape) -> None:
    """The neuron with a ReLU, and the same pre-activation through a LeakyReLU."""
    import torch

    neuron(t)
    h, y, leaky_slope = t.nodes["h"], t.nodes["y"], t.nodes["leaky_slope"]
    leaky_a = t.node("leaky_a", torch.where(h > 0, h, leaky_slope * h))
    t.node("leaky_L", (leaky_a - y) ** 2)


SPEC = ExerciseSpec(
    name="04_the_dead_relu",
    title="The dead ReLU",
    lesson="04_the_dead_relu",
    givens=(
        Given(
            "x",
            (-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0),
            lesson=-1.0,
            meaning="input",
        ),
        Given(
            "w",
            (3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0),
            lesson=3.0,
            meaning="weight",
        ),
        Given(
            "b",
            (-1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0),
            lesson=-1.0,
            meaning="bias",
        ),
        Given(
            "y",
            (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0),
            lesson=2.0,
            meaning="target",
        ),
        Given(
            "leaky_slope",
            (0.01, 0.1, 0.2, 0.3, 0.02, 0.05, 0.15, 0.25, 0.4, 0.35),
            lesson=0.01,
            meaning="LeakyReLU's slope for negative inputs",
        ),
    ),
    constraints=(
        ("the ReLU is shut: h = w·x + b < 0", lambda g: g["w"] * g["x"] + g["b"] < 0),
        pairwise_different("x", "w", "b", "y", "leaky_slope"),
    ),
    program=program,
    parts=(
        *forward_parts("ReLU turns a negative h into 0.", "L = (a - y)² with a = 0."),
        *backward_parts(
            "shut",
            "2(a - y) with a = 0: the loss still pulls on a.",
            "ReLU's slope where h < 0 is 0.",
        ),
        Part(
            "dL_dw",
            "dL/dw",
            "gradient",
            SHUT,
            "dL/dh × dh/dw, and dh/dw = x",
            of=("L", "w"),
            gate="shut",
            factors=(upstream("dL_dh"), given("x")),
            title="the gradient of the weight",
        ),
        Part(
            "dL_db",
            "dL/db",
            "gradient",
            SHUT,
            "dL/dh × dh/db, and dh/db = 1",
            of=("L", "b"),
            gate="shut",
            factors=(upstream("dL_dh"),),
            solution="dL_dh * 1",
            title="the gradient of the bias",
        ),
        Part(
            "leaky_a",
            "a (LeakyReLU)",
            "forward",
            "LeakyReLU multiplies a negative h by leaky_slope.",
            "leaky_slope × h, for h < 0",
            of=("leaky_a",),
            solution="leaky_slope * h",
            title="the leaky activation",
        ),
        Part(
            "leaky_L",
            "L (LeakyReLU)",
            "forward",
            "L = (a - y)² with the leaky a; write the arithmetic, not a rounded number.",
            "(a − y)² with the leaky a",
            of=("leaky_L",),
            solution="(leaky_a - y) ** 2",
            title="the leaky loss",
        ),
        Part(
            "leaky_dL_da",
            "dL/da (LeakyReLU)",
            "gradient",
            "2(a - y) with the leaky a.",
            "2(a − y) with the leaky a",
            of=("leaky_L", "leaky_a"),
            factors=(SQUARE, value("leaky_a - y")),
            title="the gradient at the leaky a",
        ),
        Part(
            "leaky_da_dh",
            "da/dh (LeakyReLU)",
            "local_slope",
            "LeakyReLU's slope for h < 0 is leaky_slope, not 0.",
            "LeakyReLU's slope for h < 0",
            of=("leaky_a", "h"),
            gate="open",
            factors=(given("leaky_slope"),),
            title="the local slope of the LeakyReLU",
        ),
        Part(
            "leaky_dL_dw",
            "dL/dw (LeakyReLU)",
            "gradient",
            "dL/da × leaky_slope × x.",
            "dL/da × da/dh × dh/dw",
            of=("leaky_L", "w"),
            gate="open",
            factors=(upstream("leaky_dL_da"), upstream("leaky_da_dh"), given("x")),
            title="the weight's gradient gets through",
        ),
        Part(
            "leaky_dL_db",
            "dL/db (LeakyReLU)",
            "gradient",
            "dL/da × leaky_slope × 1.",
            "dL/da × da/dh × dh/db",
            of=("leaky_L", "b"),
            gate="open",
            factors=(upstream("leaky_dL_da"), upstream("leaky_da_dh")),
            title="the bias's gradient gets through",
        ),
    ),
    written=(("why_both_are_zero", 1),),
)
