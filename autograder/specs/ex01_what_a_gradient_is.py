"""01: the slope of y = x² at three points, and one step of gradient descent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograder.core.spec import ExerciseSpec, Given, Part, given, pairwise_different, slope

if TYPE_CHECKING:
    from autograder.core.tape import Tape

SQUARE = slope("2", "the 2 of the square (d x²/dx = 2x)")


def program(t: Tape) -> None:
    """y = x² at the start, at another point and at the bottom; one step against the slope."""
    x, x_other, step_size, bottom = t.given("x", "x_other", "step_size", "bottom")
    y = t.node("y", x**2)
    t.node("y_other", x_other**2)
    t.node("y_bottom", bottom**2)
    x_after = t.node("x_after_step", x - step_size * t.grad(y, x))
    t.node("y_after_step", x_after**2)


SPEC = ExerciseSpec(
    name="01_what_a_gradient_is",
    title="What a gradient is",
    lesson="01_what_a_gradient_is",
    givens=(
        Given(
            "x",
            (3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0),
            lesson=3.0,
            meaning="where we start",
        ),
        Given(
            "x_other",
            (
                -2.0,
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
                -14.0,
                -15.0,
                -16.0,
            ),
            lesson=-2.0,
            meaning="another point",
        ),
        Given(
            "step_size",
            (0.1, 0.2, 0.3, 0.4, 0.05, 0.15, 0.25, 0.35, 0.45),
            lesson=0.1,
            meaning="step per unit of slope",
        ),
    ),
    constants={"bottom": 0.0},
    constraints=(pairwise_different("x", "x_other"),),
    program=program,
    parts=(
        Part(
            "y_start",
            "y at the start",
            "forward",
            "Forward pass: y = x² at the given x.",
            "x²",
            of=("y",),
            solution="x**2",
            title="the loss at the start",
        ),
        Part(
            "slope_start",
            "dy/dx at the start",
            "gradient",
            "The slope of x² is 2x; evaluate it at the given x.",
            "2x at the given x",
            of=("y", "x"),
            factors=(SQUARE, given("x")),
            title="the slope at the start",
        ),
        Part(
            "slope_other",
            "dy/dx at x_other",
            "gradient",
            "The slope of x² is 2x; at a negative x it is negative.",
            "2x at x_other",
            of=("y_other", "x_other"),
            factors=(SQUARE, given("x_other")),
            title="the slope at another point",
        ),
        Part(
            "slope_at_0",
            "dy/dx at x = 0",
            "gradient",
            "The slope of x² is 2x; at the bottom of the bowl it is flat.",
            "2x at x = 0",
            of=("y_bottom", "bottom"),
            solution="2 * 0.0",
            title="the slope at the bottom",
        ),
        Part(
            "x_after_step",
            "x after one step",
            "forward",
            "Step against the slope: x - step_size × slope.",
            "x - step_size × slope",
            of=("x_after_step",),
            solution="x - step_size * slope_start",
            mistakes=(
                (
                    "step_with_slope",
                    "x + step_size * slope_start",
                    "You stepped with the slope, not against it: subtract step_size × slope.",
                ),
            ),
            title="one step against the slope",
        ),
        Part(
            "y_after_step",
            "y after one step",
            "forward",
            "Square the new x: the loss should be lower than at the start.",
            "x² at the new x",
            of=("y_after_step",),
            solution="x_after_step**2",
            title="the loss after the step",
        ),
    ),
    written=(("which_way_to_step", 1),),
)
