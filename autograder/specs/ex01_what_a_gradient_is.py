"""01: the slope of a bowl y = c·x² at three points, and one step of gradient descent.

The lesson's bowl is y = x²; in a class each learner's is y = c·x² with their own c
(`Bowl`), so the same parts ask for their own slope 2c·x."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from autograder.core.spec import (
    ExerciseSpec,
    Given,
    Part,
    ScaledSquare,
    Structure,
    given,
    pairwise_different,
    scaled_math,
    scaled_python,
    slope,
)

if TYPE_CHECKING:
    import torch

    from autograder.core.tape import Tape


@dataclass(frozen=True)
class Bowl(ScaledSquare, Structure):
    """The loss y = (top/bottom)·x², a bowl with slope 2c·x: one step of any given step_size
    lowers the loss and never lands on the bottom itself (|1 - 2c·step_size| is in (0, 1);
    c = 2 would land there at step_size 0.25)."""

    top: int
    bottom: int = 1

    @property
    def tag(self) -> str:
        return self.scale_tag("c")

    def at(self, x: torch.Tensor) -> torch.Tensor:
        """The loss at `x` (PyTorch)."""
        return x**2 * self.top / self.bottom

    def of(self, x: str) -> str:
        """y at `x`, as Python arithmetic: x**2, 2 * x**2, x**2 / 2."""
        return scaled_python(self.scale, f"{x}**2")

    @property
    def slope_words(self) -> str:
        """The slope in math: 2x, x, 3x, 3x/2."""
        top, _, bottom = self.twice.partition(" / ")
        scaled = "x" if top == "1" else f"{top}x"
        return f"{scaled}/{bottom}" if bottom else scaled

    @property
    def words(self) -> str:
        return f"the loss y = {scaled_math(self.scale, 'x²')}"

    @property
    def claims(self) -> tuple[tuple[str, str], ...]:
        return (("y", self.of("x")),)


LESSON = Bowl(1)
VARIANTS = (Bowl(1, 2), Bowl(3, 2), Bowl(3, 4))


def spec_for(structure: Structure) -> ExerciseSpec:
    """The exercise for the bowl `structure`: its program and parts."""
    assert isinstance(structure, Bowl)
    bowl = structure
    square = slope(bowl.twice, f"the {bowl.twice} of d({bowl.of('x')})/dx = {bowl.slope_words}")

    def program(t: Tape) -> None:
        """y = c·x² at the start, at another point and at the bottom; one step against the
        slope."""
        x, x_other, step_size, bottom = t.given("x", "x_other", "step_size", "bottom")
        y = t.node("y", bowl.at(x))
        t.node("y_other", bowl.at(x_other))
        t.node("y_bottom", bowl.at(bottom))
        x_after = t.node("x_after_step", x - step_size * t.grad(y, x))
        t.node("y_after_step", bowl.at(x_after))

    return ExerciseSpec(
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
                f"Forward pass: {bowl.words} at the given x.",
                "y at the given x",
                of=("y",),
                solution=bowl.of("x"),
                title="the loss at the start",
            ),
            Part(
                "slope_start",
                "dy/dx at the start",
                "gradient",
                f"The slope of {bowl.words} is {bowl.slope_words}; evaluate it at the given x.",
                "dy/dx at the given x",
                of=("y", "x"),
                factors=(square, given("x")),
                title="the slope at the start",
            ),
            Part(
                "slope_other",
                "dy/dx at x_other",
                "gradient",
                f"The slope of {bowl.words} is {bowl.slope_words}; at a negative x it is negative.",
                "dy/dx at x_other",
                of=("y_other", "x_other"),
                factors=(square, given("x_other")),
                title="the slope at another point",
            ),
            Part(
                "slope_at_0",
                "dy/dx at x = 0",
                "gradient",
                f"The slope of {bowl.words} is {bowl.slope_words}; at the bottom of the bowl it "
                "is flat.",
                "dy/dx at x = 0",
                of=("y_bottom", "bottom"),
                solution=f"{bowl.twice} * 0.0",
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
                f"Your loss at the new x ({bowl.words}): it should be lower than at the start.",
                "y at the new x",
                of=("y_after_step",),
                solution=bowl.of("x_after_step"),
                title="the loss after the step",
            ),
        ),
        written=(("which_way_to_step", 1),),
        structure=bowl,
        variants=VARIANTS,
        vary=spec_for,
    )


SPEC = spec_for(LESSON)
