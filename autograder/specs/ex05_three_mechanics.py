"""05: only leaves keep .grad, gradients accumulate, no_grad()/detach(); two pieces of code."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from autograder.answers.functions import GRAD_OF_INTERMEDIATE, TRAIN
from autograder.core.spec import ExerciseSpec, Factor, Given, Part, given, pairwise_different, slope

if TYPE_CHECKING:
    from autograder.core.tape import Tape

CALLS = 3
"""Backward calls in mechanic 2."""


def program(t: Tape) -> None:
    """Mechanic 1: y = x³, z = k·y. Mechanics 2 and 3: y = x²."""
    x_cube, k, x_square = t.given("x_cube", "k", "x_square")
    y = t.node("y", x_cube**3)
    t.node("z", y * k)
    square = t.node("square", x_square**2)
    t.node("detached", square.detach())


def _grad_is_none_without_retain(t: Tape) -> bool:
    from autograder.answers.functions import backward

    y = t.nodes["x_cube"] ** 3
    backward((y * t.nodes["k"]).sum())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return y.grad is None


def _requires_grad_inside_no_grad(t: Tape) -> bool:
    import torch

    with torch.no_grad():
        inside = t.nodes["x_square"] ** 2
    return bool(inside.requires_grad)


def _detached_requires_grad(t: Tape) -> bool:
    return bool(t.nodes["detached"].requires_grad)


SQUARE = slope("2", "the 2 of the square (d x²/dx = 2x)")

SPEC = ExerciseSpec(
    name="05_three_mechanics",
    title="Three mechanics that catch nearly everyone",
    lesson="05_three_mechanics",
    givens=(
        Given(
            "x_cube",
            (2.0, -2.0, 3.0, -3.0, 4.0, -4.0, 5.0, -5.0, 1.5, -1.5, 0.5, -0.5),
            lesson=2.0,
            meaning="mechanic 1: y = x**3",
        ),
        Given(
            "k",
            (
                5.0,
                3.0,
                4.0,
                6.0,
                7.0,
                8.0,
                9.0,
                10.0,
                11.0,
                12.0,
                13.0,
                -2.0,
                -3.0,
                -4.0,
                -5.0,
                -6.0,
                -7.0,
                -8.0,
                -9.0,
            ),
            lesson=5.0,
            meaning="mechanic 1: z = y * k",
        ),
        Given(
            "x_square",
            (
                3.0,
                4.0,
                5.0,
                6.0,
                7.0,
                8.0,
                9.0,
                10.0,
                11.0,
                12.0,
                13.0,
                -3.0,
                -4.0,
                -5.0,
                -6.0,
                -7.0,
                -8.0,
                -9.0,
                -10.0,
                -11.0,
                -12.0,
                -13.0,
            ),
            lesson=3.0,
            meaning="mechanics 2, 3",
        ),
    ),
    constraints=(
        pairwise_different("x_cube", "k", "x_square"),
        (
            "one call's gradient is not another given's multiple",
            lambda g: abs(g["x_square"]) != CALLS * abs(g["x_cube"]),
        ),
    ),
    repeated_backward=("grad_after_three_calls", "grad_after_zero_and_backward"),
    program=program,
    parts=(
        Part(
            "x_grad",
            "x.grad",
            "gradient",
            "Chain rule: dz/dy × dy/dx, with y = x³ and z = k·y.",
            "dz/dy × dy/dx = k × 3x²",
            of=("z", "x_cube"),
            factors=(given("k"), slope("3 * x_cube**2", "the cube's slope 3x²")),
            title="x.grad",
        ),
        Part(
            "y_grad",
            "y.grad",
            "gradient",
            "y.grad is dz/dy: only the ×k node lies between z and y.",
            "dz/dy",
            of=("z", "y"),
            factors=(given("k"),),
            title="y.grad, kept by retain_grad()",
        ),
        Part(
            "y_grad_is_none_without_retain",
            "y.grad is None without retain_grad()",
            "fact",
            "Only leaves keep .grad unless you call retain_grad().",
            "True or False",
            fact=_grad_is_none_without_retain,
            solution="True",
            title="without retain_grad()",
        ),
        Part(
            "grad_after_three_calls",
            "x.grad after three backward calls",
            "gradient",
            "`.grad` is added to on every backward(), not replaced.",
            "x.grad after n calls = n × (gradient of one call)",
            of=("square", "x_square"),
            calls=CALLS,
            factors=(
                Factor(str(CALLS), "calls", "three backward calls"),
                SQUARE,
                given("x_square"),
            ),
            title="x.grad after three backward calls",
        ),
        Part(
            "grad_after_zero_and_backward",
            "x.grad after zero_() and one backward",
            "gradient",
            "zero_() empties .grad; one backward adds one gradient.",
            "0 + (gradient of one call)",
            of=("square", "x_square"),
            factors=(SQUARE, given("x_square")),
            solution="0 + 2 * x_square",
            title="after zeroing",
        ),
        Part(
            "requires_grad_inside_no_grad",
            "y.requires_grad inside no_grad",
            "fact",
            "Inside torch.no_grad() nothing is recorded.",
            "True or False",
            fact=_requires_grad_inside_no_grad,
            solution="False",
            title="inside no_grad()",
        ),
        Part(
            "detached_value",
            "y.detach()",
            "forward",
            ".detach() keeps the data of y = x².",
            "the data of x**2",
            of=("detached",),
            solution="x_square**2",
            title="the value of a detached tensor",
        ),
        Part(
            "detached_requires_grad",
            "y.detach().requires_grad",
            "fact",
            ".detach() gives a tensor with no history.",
            "True or False",
            fact=_detached_requires_grad,
            solution="False",
            title="the history of a detached tensor",
        ),
        Part(
            "train",
            TRAIN.label,
            "function",
            TRAIN.hint,
            "the one missing line",
            points=2,
            task=TRAIN,
            title="a training loop that forgets to zero",
        ),
        Part(
            "grad_of_intermediate",
            GRAD_OF_INTERMEDIATE.label,
            "function",
            GRAD_OF_INTERMEDIATE.hint,
            "the one missing line",
            points=2,
            task=GRAD_OF_INTERMEDIATE,
            title="keep an intermediate's gradient",
        ),
    ),
    written=(("why_gradients_accumulate", 1),),
)
